import type pg from "pg";
import { escapeUnstorable } from "../common/strict-text.js";
import type { BrokerMessage } from "../core/broker/types.js";
import { deadLettersRecorded } from "../core/metrics.js";
import type { FailureSource } from "../core/start-failures.js";

// The dead-letter store (table dead_letters): where a consumed message goes
// when its deliveries cannot start or it is not an event message, so that it
// never blocks the consumer and an operator can inspect it and replay it
// (POST /dead-letters/{id}/replay) once the cause is fixed. One row per
// message position and config; a message whose every config failed together
// (its configs could not be read, the event is over a bound, it does not
// parse) has one row without a config. The message is kept as bytea, exactly
// as consumed, whatever its bytes.

export interface DeadLetterEntry {
  msg: BrokerMessage;
  eventType?: string | undefined;
  configId?: string | undefined;
  /**
   * The event's tenant, when known (it named none: the default tenant; it named one that
   * was found). Never read here from configs: dead letters must be writable while configs
   * cannot be read.
   */
  tenantId?: string | undefined;
  kind: "permanent" | "exhausted";
  /** For the metric: what a permanent failure was about (`message`: not an event message), or `transient`. */
  cause: FailureSource | "message" | "transient";
  reason: string;
}

/** Characters of a reason kept: one quoting a message's 3 000-character key says enough in its first thousand. */
const MAX_REASON_CHARS = 1000;

/** Text PostgreSQL stores as it is: NULs and lone surrogates escaped (a reason may quote the message's keys). */
const storable = (text: string): string => {
  const escaped = escapeUnstorable(text);
  return escaped.length > MAX_REASON_CHARS
    ? `${escapeUnstorable(text.slice(0, MAX_REASON_CHARS))}…`
    : escaped;
};

/** Records a dead letter, or updates the row of the same message and config (a redelivery of it). */
export async function recordDeadLetter(pool: pg.Pool, e: DeadLetterEntry): Promise<void> {
  const { rows } = await pool.query<{ inserted: boolean }>(
    `INSERT INTO dead_letters
       (id, dedup_key, topic, position, message, event_type, config_id, kind, reason, delivery_count, tenant_id)
     VALUES (gen_random_uuid(), $1, $2, $3, $4, $5, $6, $7, $8, $9, $10::uuid)
     ON CONFLICT (dedup_key) DO UPDATE
       SET kind = EXCLUDED.kind, reason = EXCLUDED.reason, updated_at = now(),
           delivery_count = GREATEST(dead_letters.delivery_count, EXCLUDED.delivery_count)
     RETURNING (xmax = 0) AS inserted`,
    [
      `${e.msg.position}#${e.configId ?? "*"}`,
      e.msg.topic,
      e.msg.position,
      Buffer.from(e.msg.data.buffer, e.msg.data.byteOffset, e.msg.data.byteLength),
      e.eventType === undefined ? null : escapeUnstorable(e.eventType),
      e.configId ?? null,
      e.kind,
      storable(e.reason),
      e.msg.deliveryCount,
      e.tenantId ?? null,
    ],
  );
  if (rows[0]?.inserted) deadLettersRecorded.inc({ topic: e.msg.topic, cause: e.cause });
}
