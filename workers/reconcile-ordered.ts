import { closeUnsent } from "../activities/unsent-deliveries.js";
import { findConfig } from "../core/config-rows.js";
import type { ProcessContext } from "../core/process-context.js";
import { wakeSequencer } from "./enqueue-ordered.js";
import { type Tally, workflowStatus } from "./reconcile-repairs.js";

// Reconciliation of ordered keys (docs/webhooks/ordering-and-batching.md#ordered-delivery):
// a key with backlog rows older than --reconcile-grace and no running sequencer (Temporal
// lost it, or a wake never left) gets one started; it takes the backlog up in its order.
// The deliveries themselves are the other walks' (a lost head is restarted from its rows
// like any delivery). The walk goes through the keys by sequencer id, a page per tick, and
// wraps around, so every key is looked at however many there are.

/** How long a describe of a key's sequencer may take before that key waits for a later round. */
export const KEY_QUERY_DEADLINE_MS = 5_000;

interface StaleKey {
  sequencer_id: string;
  config_id: string;
  ordering_key: string;
}

export class OrderedReconciler {
  /** The last sequencer id the walk looked at; it wraps around at the end. */
  private after = "";

  constructor(private readonly ctx: ProcessContext) {}

  async tick(cutoff: Date, tally: Tally): Promise<void> {
    const { rows } = await this.ctx.db.pool.query<StaleKey>({
      name: "ordered-reconcile-keys",
      text: `SELECT sequencer_id, min(config_id::text) AS config_id, min(ordering_key) AS ordering_key
               FROM ordered_backlog
              WHERE sequencer_id > $1 AND created_at < $2
              GROUP BY sequencer_id ORDER BY sequencer_id LIMIT $3`,
      values: [this.after, cutoff, this.ctx.options.reconcileBatchSize],
    });
    this.after = rows.length < this.ctx.options.reconcileBatchSize ? "" : rows.at(-1)!.sequencer_id;
    for (const key of rows) {
      try {
        await this.check(key, tally);
      } catch (err) {
        this.ctx.logger.warn(
          { key: key.sequencer_id, err: (err as Error).message },
          "reconciliation could not check an ordered key; it is tried again next round",
        );
      }
    }
  }

  private async check(key: StaleKey, tally: Tally): Promise<void> {
    const status = await this.ctx.temporal.withDeadline(Date.now() + KEY_QUERY_DEADLINE_MS, () =>
      workflowStatus(this.ctx, key.sequencer_id),
    );
    if (status === "RUNNING") return;
    const { pool } = this.ctx.db;
    const config = await findConfig(pool, key.config_id);
    if (!config) {
      // Nothing will deliver them: each closes with the reason, and the backlog empties.
      const { rows } = await pool.query<{ webhook_id: string }>({
        name: "ordered-reconcile-orphans",
        text: "DELETE FROM ordered_backlog WHERE sequencer_id = $1 RETURNING webhook_id",
        values: [key.sequencer_id],
      });
      for (const r of rows) if (await closeUnsent(pool, r.webhook_id, "config deleted")) tally("closed");
      return;
    }
    await wakeSequencer(this.ctx, config, key.ordering_key);
    this.ctx.logger.info(
      { key: key.sequencer_id, status },
      "reconciliation started the sequencer of an ordered key with deliveries waiting",
    );
    tally("restarted");
  }
}
