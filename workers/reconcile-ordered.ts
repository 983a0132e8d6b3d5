import { WorkflowNotFoundError } from "@temporalio/client";
import { closeUnsent } from "../activities/unsent-deliveries.js";
import { findConfig } from "../core/config-rows.js";
import type { ProcessContext } from "../core/process-context.js";
import { eventOfRow } from "../core/stored-events.js";
import { orderedKnownQuery } from "../workflows/ordered-delivery.js";
import type { Outcome, Tally } from "./reconcile-repairs.js";
import type { UnsentRow } from "./reconcile-unsent.js";
import { startDelivery } from "./start-delivery.js";

// Reconciliation of ordered configs' queues (docs/webhooks/ordering-and-batching.md#ordered-delivery): the deliveries
// waiting in a key's queue live in its workflow's state, with a row each
// (unsent_deliveries.ordering_workflow_id). When that workflow no longer holds a waiting
// delivery (Temporal lost its state), the key's waiting deliveries go back to it in the
// order they were accepted, through the one start path. A head that had its turn and was
// retrying is put back first by the main walk (its restart goes through the queue too);
// until then the key waits, so no later event overtakes it.

type WaitingRow = Omit<UnsentRow, "next_try_at">;

/**
 * How long a key's workflow may take to say what it holds. A workflow no worker runs
 * never answers, and the walk must not wait on it: that key waits for a later round,
 * the other keys and the rest of reconciliation go on.
 */
export const KEY_QUERY_DEADLINE_MS = 5_000;

export class OrderedReconciler {
  constructor(private readonly ctx: ProcessContext) {}

  /** Keys with deliveries waiting since before `cutoff`, up to --retry-batch-size of them. */
  async tick(cutoff: Date, tally: Tally): Promise<void> {
    const { rows } = await this.ctx.db.pool.query<{ key: string }>({
      name: "ordered-reconcile-keys",
      text: `SELECT ordering_workflow_id AS key FROM unsent_deliveries
              WHERE state = 'waiting' AND ordering_workflow_id IS NOT NULL AND updated_at < $1
              GROUP BY ordering_workflow_id ORDER BY min(accepted_at) LIMIT $2`,
      values: [cutoff, this.ctx.options.reconcileBatchSize],
    });
    for (const { key } of rows) {
      try {
        await this.restoreKey(key, tally);
      } catch (err) {
        this.ctx.logger.warn(
          { key, err: (err as Error).message },
          "reconciliation could not check an ordered key; it is tried again next round",
        );
      }
    }
  }

  /** What the key's workflow holds; nothing when it is gone. */
  private async known(keyWorkflowId: string): Promise<Set<string>> {
    try {
      const handle = this.ctx.temporal.workflow.getHandle(keyWorkflowId);
      return new Set(
        await this.ctx.temporal.withDeadline(Date.now() + KEY_QUERY_DEADLINE_MS, () =>
          handle.query(orderedKnownQuery),
        ),
      );
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return new Set();
      throw err;
    }
  }

  private async restoreKey(keyWorkflowId: string, tally: Tally): Promise<void> {
    const { pool } = this.ctx.db;
    const known = await this.known(keyWorkflowId);
    // A head that had its turn, still queued in attempts, that the workflow no longer holds.
    const { rows: heads } = await pool.query<{ workflow_id: string }>({
      name: "ordered-reconcile-heads",
      text: `SELECT u.workflow_id FROM unsent_deliveries u
              WHERE u.ordering_workflow_id = $1 AND u.state = 'sent'
                AND EXISTS (SELECT 1 FROM attempts a
                             WHERE a.webhook_id = u.webhook_id AND a.status IN ('to retry', 'retrying'))`,
      values: [keyWorkflowId],
    });
    if (heads.some((h) => !known.has(h.workflow_id))) return;
    const { rows } = await pool.query<WaitingRow>({
      name: "ordered-reconcile-waiting",
      text: `SELECT webhook_id, config_id, workflow_id, event_id, payload, replay_of, accepted_at
               FROM unsent_deliveries WHERE ordering_workflow_id = $1 AND state = 'waiting'
              ORDER BY accepted_at, webhook_id`,
      values: [keyWorkflowId],
    });
    // One after the other: each joins the queue after the one accepted before it. Those the
    // workflow holds are not counted (they wait, as they should).
    for (const row of rows) if (!known.has(row.workflow_id)) tally(await this.restore(row));
  }

  private async restore(row: WaitingRow): Promise<Outcome> {
    const { pool } = this.ctx.db;
    const config = await findConfig(pool, row.config_id);
    const event = await eventOfRow(pool, { eventId: row.event_id, payload: row.payload });
    if (!config || !event) {
      await closeUnsent(pool, row.webhook_id, config ? "its event is no longer stored" : "config deleted");
      return "closed";
    }
    await startDelivery(this.ctx, config, event, row.workflow_id, row.replay_of ?? undefined, {
      webhookId: row.webhook_id,
      acceptedAt: row.accepted_at.toISOString(),
      resume: { retryAttempt: 0, attempts: [] },
    });
    return "restarted";
  }
}
