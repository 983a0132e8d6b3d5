import type pg from "pg";
import type { BrokerMessage } from "../core/broker/types.js";
import { parseEventMessage } from "../core/event-message.js";
import { deadLettersRecorded, messagesRedelivered } from "../core/metrics.js";
import type { ProcessContext } from "../core/process-context.js";
import type { FailureSource } from "../core/start-failures.js";
import type { EventStarts, StartFailure } from "./event-deliveries.js";

// The dead-letter store (table dead_letters): where a consumed message goes
// when its deliveries cannot start, so that it never blocks the consumer and
// an operator can replay it (POST /dead-letters/{id}/replay) once the cause is
// fixed. One row per message position and config; a message whose every
// config failed together (its configs could not be read, the event is over a
// bound) has one row without a config.

export interface DeadLetterEntry {
  msg: BrokerMessage;
  eventType?: string | undefined;
  configId?: string | undefined;
  kind: "permanent" | "exhausted";
  /** For the metric: what a permanent failure was about, or `transient`. */
  cause: FailureSource | "transient";
  reason: string;
}

/** Records a dead letter, or updates the row of the same message and config (a redelivery of it). */
export async function recordDeadLetter(pool: pg.Pool, e: DeadLetterEntry): Promise<void> {
  const { rows } = await pool.query<{ inserted: boolean }>(
    `INSERT INTO dead_letters
       (id, dedup_key, topic, position, message, event_type, config_id, kind, reason, delivery_count)
     VALUES (gen_random_uuid(), $1, $2, $3, $4, $5, $6, $7, $8, $9)
     ON CONFLICT (dedup_key) DO UPDATE
       SET kind = EXCLUDED.kind, reason = EXCLUDED.reason, updated_at = now(),
           delivery_count = GREATEST(dead_letters.delivery_count, EXCLUDED.delivery_count)
     RETURNING (xmax = 0) AS inserted`,
    [
      `${e.msg.position}#${e.configId ?? "*"}`,
      e.msg.topic,
      e.msg.position,
      Buffer.from(e.msg.data),
      e.eventType ?? null,
      e.configId ?? null,
      e.kind,
      e.reason,
      e.msg.deliveryCount,
    ],
  );
  if (rows[0]?.inserted) deadLettersRecorded.inc({ topic: e.msg.topic, cause: e.cause });
}

const describe = (f: StartFailure) => (f.configId ? `config ${f.configId}: ${f.reason}` : f.reason);

/**
 * Settles a consumed message once its starts are done: permanent failures go
 * to the dead-letter store at once; failures that may pass (Temporal or the
 * database unavailable) throw, so the broker delivers the message again after
 * the redelivery backoff (the starts that succeeded start nothing new then),
 * until its last allowed delivery, when they go to the store too. Returns the
 * dead letters written; a dead letter that cannot be written throws as well.
 */
export async function settleStarts(
  rt: ProcessContext,
  msg: BrokerMessage,
  eventType: string,
  starts: EventStarts,
): Promise<number> {
  const lastDelivery = msg.deliveryCount >= rt.options.redelivery.maxDeliveries;
  const retry = starts.failures.filter((f) => f.permanent === null);
  const now = starts.failures.filter((f) => f.permanent !== null || lastDelivery);
  for (const f of now) {
    await recordDeadLetter(rt.db.pool, {
      msg,
      eventType,
      configId: f.configId,
      kind: f.permanent ? "permanent" : "exhausted",
      cause: f.permanent ?? "transient",
      reason: f.permanent ? f.reason : `still failing after ${msg.deliveryCount} deliveries: ${f.reason}`,
    });
  }
  if (retry.length > 0 && !lastDelivery) {
    messagesRedelivered.inc({ topic: msg.topic });
    throw new Error(retry.map(describe).join("; "));
  }
  if (now.length > 0) {
    rt.logger.warn(
      { topic: msg.topic, position: msg.position, type: eventType, failures: now.map(describe) },
      "dead-lettered: deliveries that could not start",
    );
  }
  return now.length;
}

/** Dead-letters a message the broker stopped delivering before it was settled. */
export async function deadLetterAbandoned(
  rt: ProcessContext,
  msg: BrokerMessage,
  reason: string,
): Promise<void> {
  let eventType: string | undefined;
  try {
    eventType = parseEventMessage(msg.data).type;
  } catch {
    // kept as it came; its replay will say it does not parse
  }
  await recordDeadLetter(rt.db.pool, { msg, eventType, kind: "exhausted", cause: "transient", reason });
  rt.logger.warn({ topic: msg.topic, position: msg.position, reason }, "dead-lettered: the broker gave up");
}
