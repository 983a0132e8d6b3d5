import { WorkflowExecutionAlreadyStartedError } from "@temporalio/client";
import { subscriptionsMatching } from "../api/event-types.js";
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
import { sendQueue } from "./delivery-worker.js";
import { deliveryKey, parseEventMessage, UnparsableMessage, webhookIdFor } from "./event-message.js";
import { messagesConsumed, workflowsStarted, workflowsStartedEagerly } from "./metrics.js";
import type { Runtime } from "./runtime.js";

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
  const host = new URL(config.endpoint).host;
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
      staticSummary: `${event.type} → ${host}`,
      typedSearchAttributes: [
        { key: WebhookConfigId, value: config.id },
        { key: WebhookId, value: webhookId },
        { key: WebhookEventType, value: event.type },
        { key: WebhookEndpointHost, value: host },
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
 * config. The message is acknowledged only once every start succeeded (a
 * redelivery then starts nothing new: ids are deterministic); a message that
 * can never be delivered is logged with its reason and acknowledged.
 */
export async function startEventConsumer(rt: Runtime): Promise<BrokerConsumer> {
  const { logger, db } = rt;
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
    const configs = await db.prisma.config.findMany({
      where: { active: true, eventTypes: { hasSome: subscriptionsMatching(event.type) } },
    });
    const key = deliveryKey(event, msg.data);
    const results = await Promise.all(
      configs.map((c) => startDelivery(rt, c, event, deliveryWorkflowId(c.id, key))),
    );
    const started = results.filter((r) => r.started).length;
    const eager = results.filter((r) => r.eager).length;
    workflowsStarted.inc(started);
    workflowsStartedEagerly.inc(eager);
    messagesConsumed.inc({ topic: msg.topic, result: "delivered" });
    logger.info(
      {
        topic: msg.topic,
        type: event.type,
        key,
        configs: configs.length,
        started,
        eager,
        redelivery: msg.deliveryCount > 1,
      },
      "event consumed",
    );
  };

  await consumer.start(handle);
  rt.shutdown.add("event consumer", () => consumer.stop());
  return consumer;
}
