import { type BrokerMessage, redeliveryDelay } from "../core/broker/types.js";
import {
  deliveryKey,
  type EventMessage,
  parseEventMessage,
  UnparsableMessage,
} from "../core/event-message.js";
import {
  messagesConsumed,
  observeParkedDeadLetters,
  workflowsStarted,
  workflowsStartedEagerly,
} from "../core/metrics.js";
import { openConsumer } from "../core/open-broker.js";
import type { ProcessContext } from "../core/process-context.js";
import { keyword } from "../core/start-limits.js";
import { eventTrace, withEventSpan } from "../core/tracing.js";
import { recordDeadLetter } from "./dead-letter-rows.js";
import { DeadLetterSpool, databaseIdentity } from "./dead-letter-spool.js";
import { deadLetterAbandoned, deadLetterUnparsable, settleStarts } from "./dead-letters.js";
import { startEventDeliveries } from "./event-deliveries.js";

/** Messages handled at once per consumer process. */
const CONCURRENCY = 64;

/** The event consumer as the health check sees it: the broker, and the dead letters parked on disk. */
export interface EventConsumer {
  /** Throws when the broker is unreachable or the consumer stuck; may resolve to a string shown in the health answer. */
  healthy(): Promise<unknown>;
  /** Throws while dead letters wait in --dead-letter-spool for the store. */
  deadLettersHealthy(): Promise<void>;
}

/**
 * Consumes event messages and starts one delivery workflow per matching active
 * config, each config's start on its own. The message is acknowledged once
 * every start succeeded or went to the dead-letter store (a redelivery starts
 * nothing new: ids are deterministic); starts that may pass later send it back
 * to the broker, a bounded number of times (dead-letters.ts). A message that
 * is not an event message (not UTF-8, not JSON, text PostgreSQL cannot store,
 * no type, ...) can never be delivered: it goes to the dead-letter store as it
 * came, with the reason, so that nothing consumed is lost without a trace.
 */
export async function startEventConsumer(ctx: ProcessContext): Promise<EventConsumer> {
  const { logger, options } = ctx;
  const spool = new DeadLetterSpool(
    options.deadLetterSpool,
    databaseIdentity(options.storageSqldbConnString, options.dataDir),
    logger,
  );
  await spool.open();
  spool.start((e) => recordDeadLetter(ctx.db.pool, e));
  observeParkedDeadLetters(() => spool.parked());
  const consumer = await openConsumer(options, logger, CONCURRENCY);

  const handle = async (msg: BrokerMessage) => {
    let event: EventMessage;
    try {
      event = parseEventMessage(msg.data);
    } catch (err) {
      if (!(err instanceof UnparsableMessage)) throw err;
      await deadLetterUnparsable(ctx, spool, msg, err.message);
      messagesConsumed.inc({ topic: msg.topic, result: "rejected" });
      return;
    }
    const starts = await withEventSpan(
      ctx.tracing,
      `consume ${msg.topic}`,
      {
        "messaging.system": ctx.options.broker,
        "messaging.destination.name": msg.topic,
        "webhooks.event_type": event.type,
        "webhooks.idempotency_key": event.idempotency_key,
      },
      () => eventTrace(msg.data),
      () =>
        startEventDeliveries(ctx, event, msg.data, undefined, {
          delayMs: redeliveryDelay(ctx.options.redelivery, msg.deliveryCount),
          last: msg.deliveryCount >= ctx.options.redelivery.maxBrokerDeliveries,
        }),
    );
    const deadLettered = await settleStarts(ctx, spool, msg, event.type, starts);
    const started = starts.started.filter((r) => r.started).length;
    const eager = starts.started.filter((r) => r.eager).length;
    workflowsStarted.inc(started);
    workflowsStartedEagerly.inc(eager);
    messagesConsumed.inc({ topic: msg.topic, result: deadLettered > 0 ? "dead_lettered" : "delivered" });
    logger.info(
      {
        topic: msg.topic,
        type: keyword(event.type),
        key: deliveryKey(event.idempotency_key, msg.data),
        configs: starts.configs,
        filtered: starts.filtered,
        overBudget: starts.overBudget,
        started,
        eager,
        deadLettered,
        redelivery: msg.deliveryCount > 1,
      },
      "event consumed",
    );
  };

  await consumer.start(handle, (msg, reason) => deadLetterAbandoned(ctx, spool, msg, reason));
  // Stopped after the consumer (added first, closed last): its last handlers may still park.
  ctx.shutdown.add("dead-letter spool", () => spool.stop());
  ctx.shutdown.add("event consumer", () => consumer.stop());
  return {
    healthy: () => consumer.healthy(),
    deadLettersHealthy: async () => spool.check(),
  };
}
