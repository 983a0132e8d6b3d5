import type pg from "pg";

// Deliveries whose first send waits (table unsent_deliveries, migration 20261129100000):
// until a first attempt row exists, this row is what makes the delivery visible, reachable
// by cancel and config deactivation, and repairable by reconciliation, and it keeps when
// the delivery was accepted, which its caps count from.

export interface UnsentWait {
  webhookId: string;
  configId: string;
  workflowId: string;
  /** The stored event it will send (core/stored-events.ts); null when that is gone. */
  eventId: string | null;
  replayOf?: string | undefined;
  acceptedAt: Date;
  reason: string;
  nextTryAt: Date;
}

/** Records (again) that the delivery's first send waits; its acceptance time is kept. */
export async function recordUnsentWait(pool: pg.Pool, w: UnsentWait): Promise<void> {
  await pool.query({
    name: "unsent-wait",
    text: `INSERT INTO unsent_deliveries
             (webhook_id, config_id, workflow_id, event_id, payload, replay_of, accepted_at, reason,
              next_try_at)
           VALUES ($1, $2, $3, $4, CASE WHEN $4::text IS NULL THEN '' END, $5, $6, $7, $8)
           ON CONFLICT (webhook_id) DO UPDATE
             SET reason = EXCLUDED.reason, next_try_at = EXCLUDED.next_try_at, updated_at = now()
             WHERE unsent_deliveries.state = 'waiting'`,
    values: [
      w.webhookId,
      w.configId,
      w.workflowId,
      w.eventId,
      w.replayOf ?? null,
      w.acceptedAt,
      w.reason,
      w.nextTryAt,
    ],
  });
}

/**
 * Records that batched configs' deliveries wait for their batch (before the signal that
 * adds them), in one statement for the events of one signal (workers/collector-feed.ts):
 * visible, and found again by reconciliation if Temporal loses the collector (`nextTryAt`:
 * when its batch should have gone). A delivery recorded before (a broker redelivery) keeps
 * its row. Returns the webhook ids whose row this inserted.
 */
export async function recordCollected(pool: pg.Pool, waits: UnsentWait[]): Promise<Set<string>> {
  if (waits.length === 0) return new Set();
  const column = <K extends keyof UnsentWait>(k: K) => waits.map((w) => w[k] ?? null);
  const { rows } = await pool.query<{ webhook_id: string }>({
    name: "unsent-collected",
    text: `INSERT INTO unsent_deliveries
             (webhook_id, config_id, workflow_id, event_id, replay_of, accepted_at, reason, next_try_at)
           SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::uuid[],
                                $6::timestamptz[], $7::text[], $8::timestamptz[])
           ON CONFLICT (webhook_id) DO NOTHING
           RETURNING webhook_id`,
    values: [
      column("webhookId"),
      column("configId"),
      column("workflowId"),
      column("eventId"),
      column("replayOf"),
      column("acceptedAt"),
      column("reason"),
      column("nextTryAt"),
    ],
  });
  return new Set(rows.map((r) => r.webhook_id));
}

/** Closes a delivery that never sent: its waiting row becomes `closed` with the reason. */
export async function closeUnsent(pool: pg.Pool, webhookId: string, reason: string): Promise<number> {
  const { rowCount } = await pool.query({
    name: "unsent-close",
    text: `UPDATE unsent_deliveries SET state = 'closed', reason = $2, updated_at = now()
            WHERE webhook_id = $1 AND state = 'waiting'`,
    values: [webhookId, reason],
  });
  return rowCount ?? 0;
}

/**
 * Hands batched deliveries' waiting rows to the workflow sending their batch: reconciliation
 * then leaves them to it while it runs, instead of adding them to a collector again (which,
 * started anew after an idle end, would not know they were handed on already).
 */
export async function adoptIntoBatch(pool: pg.Pool, webhookIds: string[], workflowId: string): Promise<void> {
  await pool.query({
    name: "unsent-adopt-batch",
    text: `UPDATE unsent_deliveries SET workflow_id = $2, updated_at = now()
            WHERE webhook_id = ANY($1::uuid[]) AND state = 'waiting'`,
    values: [webhookIds, workflowId],
  });
}
