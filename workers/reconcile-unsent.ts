import { whyNoFurtherTry } from "../activities/delivery-policy.js";
import { closeUnsent } from "../activities/unsent-deliveries.js";
import type { ProcessContext } from "../core/process-context.js";
import { eventOfRow } from "../core/stored-events.js";
import { type Outcome, type Restart, repairAll, repairDelivery, type Tally } from "./reconcile-repairs.js";
import { startDelivery } from "./start-delivery.js";
import { deliveryPolicy } from "./start-delivery-policy.js";

// Reconciliation of deliveries whose first send waits (activities/unsent-deliveries.ts):
// they have no attempt row for the main walk to find, so their unsent rows are walked
// the same way. A waiting delivery whose workflow is gone is restarted from its first
// send while its config and caps allow (its caps count from when it was accepted), or
// closed with the reason; GET /webhooks/{id} then shows it `failed` with that reason.
// An ordered config's deliveries still in their key's backlog are their sequencer's
// (workflows/key-sequencer.ts): it starts each in turn, and looks after one it finds
// started; one whose turn ended without a send is walked here like any other.

export interface UnsentRow {
  webhook_id: string;
  config_id: string;
  workflow_id: string;
  event_id: string | null;
  payload: string | null;
  replay_of: string | null;
  accepted_at: Date;
  next_try_at: Date;
}

export class UnsentReconciler {
  private cursor: { at: Date; id: string } | undefined;

  constructor(private readonly ctx: ProcessContext) {}

  /** Up to --retry-batch-size waiting deliveries overdue by --reconcile-grace, each repaired. */
  async tick(cutoff: Date, tally: Tally): Promise<void> {
    const { options, db } = this.ctx;
    const after = this.cursor ?? { at: new Date(0), id: "00000000-0000-0000-0000-000000000000" };
    const rows = await db.prisma.$queryRaw<UnsentRow[]>`
      SELECT webhook_id, config_id, workflow_id, event_id, payload, replay_of, accepted_at, next_try_at
        FROM unsent_deliveries
       WHERE state = 'waiting' AND next_try_at < ${cutoff}
         AND (ordering_workflow_id IS NULL
              OR NOT EXISTS (SELECT 1 FROM ordered_backlog b WHERE b.webhook_id = unsent_deliveries.webhook_id))
         AND (next_try_at, webhook_id) > (${after.at}, ${after.id}::uuid)
       ORDER BY next_try_at, webhook_id
       LIMIT ${options.reconcileBatchSize}`;
    const last = rows.at(-1);
    this.cursor =
      rows.length < options.reconcileBatchSize || !last
        ? undefined
        : { at: last.next_try_at, id: last.webhook_id };
    await repairAll(rows, async (row) => tally(await this.repair(row)));
  }

  private repair(row: UnsentRow): Promise<Outcome> {
    return repairDelivery(this.ctx, {
      webhookId: row.webhook_id,
      what: "delivery waiting for its first send",
      workflowId: () => Promise.resolve(row.workflow_id),
      close: (reason) => closeUnsent(this.ctx.db.pool, row.webhook_id, reason),
      restart: (workflowId, status) => this.restart(row, workflowId, status),
    });
  }

  /** Starts the delivery again from its first send when config and caps allow, else says why not. */
  private async restart(row: UnsentRow, workflowId: string, status: string): Promise<Restart> {
    const config = await this.ctx.db.prisma.config.findUnique({ where: { id: row.config_id } });
    let reason = whyNoFurtherTry({
      config,
      retryAttempt: 0,
      policy: deliveryPolicy(this.ctx),
      firstAttemptAt: row.accepted_at,
      now: Date.now(),
    });
    const event = await eventOfRow(this.ctx.db.pool, { eventId: row.event_id, payload: row.payload });
    if (!event) reason ??= "its event is no longer stored";
    if (reason || !config || !event)
      return { close: `${reason} (never sent; workflow ${status.toLowerCase()})` };
    const { started } = await startDelivery(this.ctx, config, event, workflowId, row.replay_of ?? undefined, {
      webhookId: row.webhook_id,
      acceptedAt: row.accepted_at.toISOString(),
      resume: { retryAttempt: 0, attempts: [] },
    });
    return started ? "started" : "already started";
  }
}
