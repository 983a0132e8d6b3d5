import type { BrokerConsumer, BrokerMessage } from "../core/broker/types.js";
import {
  deliveryKey,
  type EventMessage,
  parseEventMessage,
  UnparsableMessage,
} from "../core/event-message.js";
import { messagesConsumed, workflowsStarted, workflowsStartedEagerly } from "../core/metrics.js";
import { openConsumer } from "../core/open-broker.js";
import type { ProcessContext } from "../core/process-context.js";
import { keyword } from "../core/start-limits.js";
import { eventTrace, withEventSpan } from "../core/tracing.js";
import { deadLetterAbandoned, settleStarts } from "./dead-letters.js";
import { startEventDeliveries } from "./event-deliveries.js";

/** Messages handled at once per consumer process. */
const CONCURRENCY = 64;

/**
 * Consumes event messages and starts one delivery workflow per matching active
 * config, each config's start on its own. The message is acknowledged once
 * every start succeeded or went to the dead-letter store (a redelivery starts
 * nothing new: ids are deterministic); starts that may pass later send it back
 * to the broker, a bounded number of times (dead-letters.ts). An unparsable
 * message can never be delivered: it is logged with its reason and acknowledged.
 */
export async function startEventConsumer(rt: ProcessContext): Promise<BrokerConsumer> {
  const { logger } = rt;
  const consumer = await openConsumer(rt.options, logger, CONCURRENCY);

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
        "messaging.system": rt.options.broker,
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
