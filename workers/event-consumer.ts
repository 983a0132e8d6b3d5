import { WorkflowExecutionAlreadyStartedError } from "@temporalio/client";
import type { Config } from "../generated/prisma/client.js";
import { deliverWebhook } from "../workflows/delivery.js";
import {
  WebhookAttemptCount,
  WebhookConfigId,
  WebhookDeliveryStatus,
  WebhookEndpointHost,
  WebhookEventType,
  WebhookId,
} from "../workflows/search-attributes.js";
import type { DeliveryPolicy, DeliveryResume, EventMessage } from "../workflows/types.js";
import { openConsumer } from "./broker/index.js";
import type { BrokerConsumer, BrokerMessage } from "./broker/types.js";
import { deadLetterAbandoned, settleStarts } from "./dead-letters.js";
import { sendQueue } from "./delivery-worker.js";
import { startEventDeliveries } from "./event-deliveries.js";
import { deliveryKey, parseEventMessage, UnparsableMessage, webhookIdFor } from "./event-message.js";
import { messagesConsumed, workflowsStarted, workflowsStartedEagerly } from "./metrics.js";
import type { Runtime } from "./runtime.js";
import { endpointHost } from "./start-failures.js";
import { keyword, summary } from "./start-limits.js";
import { eventTrace, withEventSpan } from "./tracing.js";

/** Messages handled at once per consumer process. */
const CONCURRENCY = 64;

export const deliveryWorkflowId = (configId: string, key: string) => `delivery:${configId}:${key}`;

/** The policy every new delivery carries, from the worker's flags. */
export function deliveryPolicy(rt: Runtime): DeliveryPolicy {
  const s = rt.settings;
  return {
    minBackoffMs: s.minBackoffDelay,
    maxBackoffMs: s.maxBackoffDelay,
    abortAfterMs: s.abortAfter,
    maxAttempts: s.maxAttempts,
  };
}

/** How reconciliation restarts a delivery whose workflow was lost (see workers/reconciliation.ts). */
export interface RestartOptions {
  /** The delivery's webhook id (derived from the workflow id otherwise). */
  webhookId: string;
  resume: DeliveryResume;
}

/** Starts (idempotently) the delivery workflow of one event to one config. */
export async function startDelivery(
  rt: Runtime,
  config: Config,
  event: EventMessage,
  workflowId: string,
  replayOf?: string,
  restart?: RestartOptions,
): Promise<{ webhookId: string; started: boolean; eager: boolean }> {
  const webhookId = restart?.webhookId ?? webhookIdFor(workflowId);
  const host = endpointHost(config);
  const eager = rt.eagerStarter;
  try {
    const handle = await (eager ?? rt.temporal).workflow.start(deliverWebhook, {
      taskQueue: rt.settings.taskQueue,
      workflowId,
      requestEagerStart: eager !== undefined,
      args: [
        {
          webhookId,
          configId: config.id,
          event,
          policy: deliveryPolicy(rt),
          sendTaskQueue: sendQueue(rt.settings.taskQueue),
          ...(replayOf ? { replayOf } : {}),
          ...(rt.settings.ratelimitAddr ? { rateLimited: true } : {}),
          ...(rt.settings.sendMode === "local" ? { localSends: true } : {}),
          ...(restart ? { resume: restart.resume } : {}),
        },
      ],
      // A restart may reuse the id of its closed workflow; a new delivery never does.
      workflowIdReusePolicy: restart ? "ALLOW_DUPLICATE" : "REJECT_DUPLICATE",
      // Shortened to Temporal's limits; the input above keeps the event whole.
      staticSummary: summary(`${event.type} → ${host}`),
      typedSearchAttributes: [
        { key: WebhookConfigId, value: config.id },
        { key: WebhookId, value: webhookId },
        { key: WebhookEventType, value: keyword(event.type) },
        { key: WebhookEndpointHost, value: keyword(host) },
        { key: WebhookDeliveryStatus, value: restart ? "to retry" : "pending" },
        { key: WebhookAttemptCount, value: restart?.resume.attempts.length ?? 0 },
      ],
    });
    return { webhookId, started: true, eager: handle.eagerlyStarted };
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError)
      return { webhookId, started: false, eager: false };
    throw err;
  }
}

/**
 * Consumes event messages and starts one delivery workflow per matching active
 * config, each config's start on its own. The message is acknowledged once
 * every start succeeded or went to the dead-letter store (a redelivery starts
 * nothing new: ids are deterministic); starts that may pass later send it back
 * to the broker, a bounded number of times (dead-letters.ts). An unparsable
 * message can never be delivered: it is logged with its reason and acknowledged.
 */
export async function startEventConsumer(rt: Runtime): Promise<BrokerConsumer> {
  const { logger } = rt;
  const consumer = await openConsumer(rt.settings, logger, CONCURRENCY);

  const handle = async (msg: BrokerMessage) => {
    let event: EventMessage;
    try {
      event = parseEventMessage(msg.data);
    } catch (err) {
      if (!(err instanceof UnparsableMessage)) throw err;
      logger.warn(
        {
          topic: msg.topic,
          reason: err.message,
          message: Buffer.from(msg.data).toString("utf8").slice(0, 1024),
        },
        "unparsable event message dropped",
      );
      messagesConsumed.inc({ topic: msg.topic, result: "rejected" });
      return;
    }
    const starts = await withEventSpan(
      rt.tracing,
      `consume ${msg.topic}`,
      {
        "messaging.system": rt.settings.broker,
        "messaging.destination.name": msg.topic,
        "webhooks.event_type": event.type,
        "webhooks.idempotency_key": event.idempotency_key,
      },
      () => eventTrace(msg.data),
      () => startEventDeliveries(rt, event, msg.data),
    );
    const deadLettered = await settleStarts(rt, msg, event.type, starts);
    const started = starts.started.filter((r) => r.started).length;
    const eager = starts.started.filter((r) => r.eager).length;
    workflowsStarted.inc(started);
    workflowsStartedEagerly.inc(eager);
    messagesConsumed.inc({ topic: msg.topic, result: deadLettered > 0 ? "dead_lettered" : "delivered" });
    logger.info(
      {
        topic: msg.topic,
        type: keyword(event.type),
        key: deliveryKey(event, msg.data),
        configs: starts.configs,
        started,
        eager,
        deadLettered,
        redelivery: msg.deliveryCount > 1,
      },
      "event consumed",
    );
  };

  await consumer.start(handle, (msg, reason) => deadLetterAbandoned(rt, msg, reason));
  rt.shutdown.add("event consumer", () => consumer.stop());
  return consumer;
}
