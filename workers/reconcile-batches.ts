import type pg from "pg";
import { isBatchWorkflowId } from "../core/batching.js";

// The queued attempt rows of one batch (they share its workflow id) are repaired one after
// the other, in the order their events were accepted: a batch lost while retrying restarts
// each event alone through the start path, and an ordered config's key queues each restart
// as it arrives, so restarts racing one another could send a later event of the batch before
// an earlier one (docs/webhooks/ordering-and-batching.md, batched ordered configs).

interface Row {
  webhook_id: string;
  workflow_id: string | null;
}

/**
 * `rows` in groups to repair: each batch's rows together, in acceptance order (their
 * unsent rows keep it; the webhook id breaks ties and orders rows without one), every other
 * row alone; groups in the order their first row came.
 */
export async function lostBatchesInOrder<T extends Row>(pool: pg.Pool, rows: T[]): Promise<T[][]> {
  const groups = new Map<string, T[]>();
  for (const row of rows) {
    const key =
      row.workflow_id && isBatchWorkflowId(row.workflow_id) ? row.workflow_id : `row:${row.webhook_id}`;
    groups.set(key, [...(groups.get(key) ?? []), row]);
  }
  const batched = rows.filter((r) => (groups.get(r.workflow_id ?? "")?.length ?? 0) > 1);
  if (batched.length === 0) return [...groups.values()];
  const { rows: accepted } = await pool.query<{ webhook_id: string; accepted_at: Date }>({
    name: "reconcile-batch-acceptance",
    text: "SELECT webhook_id, accepted_at FROM unsent_deliveries WHERE webhook_id = ANY($1::uuid[])",
    values: [batched.map((r) => r.webhook_id)],
  });
  const at = new Map(accepted.map((a) => [a.webhook_id, a.accepted_at.getTime()]));
  const order = (a: T, b: T) =>
    (at.get(a.webhook_id) ?? Number.MAX_SAFE_INTEGER) - (at.get(b.webhook_id) ?? Number.MAX_SAFE_INTEGER) ||
    a.webhook_id.localeCompare(b.webhook_id);
  return [...groups.values()].map((g) => (g.length > 1 ? [...g].sort(order) : g));
}
