import { failPending, summarize } from "../activities/attempts-store.js";
import { whyNoFurtherTry } from "../activities/delivery-policy.js";
import { deliveryKey, webhookIdFor } from "../core/event-message.js";
import { reconciled } from "../core/metrics.js";
import type { ProcessContext } from "../core/process-context.js";
import { eventOfRow } from "../core/stored-events.js";
import { AttemptStatus, Prisma } from "../generated/prisma/client.js";
import { WebhookId } from "../workflows/search-attributes.js";
import { lostBatchesInOrder } from "./reconcile-batches.js";
import { OrderedReconciler } from "./reconcile-ordered.js";
import { type Outcome, type Restart, repairAll, repairDelivery, type Tally } from "./reconcile-repairs.js";
import { UnsentReconciler } from "./reconcile-unsent.js";
import { deliveryWorkflowId, startDelivery } from "./start-delivery.js";
import { deliveryPolicy } from "./start-delivery-policy.js";

// Reconciliation keeps the attempts table and Temporal in agreement when the
// workflow that owns a queued row can no longer act on it: terminated from the
// Web UI, failed, or lost with Temporal's state. It gives the retry loop flags
// (docs/spec-rules.md#retry-loop) their meaning: every --retry-period, up to --retry-batch-size queued
// rows that are overdue by --reconcile-grace are checked against their
// workflow. A running workflow is the authority and is never touched; a lost
// one is restarted from its row (same webhook id, next retry attempt) while
// the policy allows, else its row is closed `failed` with the reason.

export interface ReconcileReport {
  checked: number;
  running: number;
  restarted: number;
  closed: number;
  /** Deliveries that had ended by the time they were looked at (their workflow or another reconciler). */
  ended: number;
  /** Repairs that failed for a reason that may pass (Temporal or the database unavailable); tried next round. */
  failed: number;
}

interface QueuedRow {
  id: string;
  webhook_id: string;
  workflow_id: string | null;
  next_retry_after: Date;
}

export class Reconciler {
  /** Keyset position of the walk over queued rows; it wraps around at the end. */
  private cursor: { at: Date; id: string } | undefined;

  private readonly unsent: UnsentReconciler;
  private readonly ordered: OrderedReconciler;

  constructor(private readonly ctx: ProcessContext) {
    this.unsent = new UnsentReconciler(ctx);
    this.ordered = new OrderedReconciler(ctx);
  }

  async tick(): Promise<ReconcileReport> {
    const { options, db } = this.ctx;
    const cutoff = new Date(Date.now() - options.reconcileGrace);
    const after = this.cursor ?? { at: new Date(0), id: "00000000-0000-0000-0000-000000000000" };
    const rows = await db.prisma.$queryRaw<QueuedRow[]>`
      SELECT id, webhook_id, workflow_id, next_retry_after FROM attempts
       WHERE status IN ('to retry', 'retrying')
         AND (next_retry_after, id) > (${after.at}, ${after.id}::uuid)
         AND ((status = 'to retry' AND next_retry_after < ${cutoff})
              OR (status = 'retrying' AND updated_at < ${cutoff}))
       ORDER BY next_retry_after, id
       LIMIT ${options.reconcileBatchSize}`;
    const last = rows.at(-1);
    this.cursor =
      rows.length < options.reconcileBatchSize || !last
        ? undefined
        : { at: last.next_retry_after, id: last.id };
    const report: ReconcileReport = { checked: 0, running: 0, restarted: 0, closed: 0, ended: 0, failed: 0 };
    const tally: Tally = (outcome) => {
      report.checked++;
      report[outcome]++;
      reconciled.inc({ outcome });
    };
    // One row per delivery (a queued delivery has one queued row; older versions could leave two).
    const deliveries = [...new Map(rows.map((r) => [r.webhook_id, r])).values()];
    // A lost batch's events one after the other (workers/reconcile-batches.ts).
    const groups = await lostBatchesInOrder(db.pool, deliveries);
    await repairAll(groups, async (group) => {
      for (const row of group) tally(await this.repair(row));
    });
    // Deliveries whose first send waits have no attempt row: walked apart.
    // And ordered configs' queued deliveries, put back in their keys' order.
    await this.unsent.tick(cutoff, tally);
    await this.ordered.tick(cutoff, tally);
    if (report.restarted || report.closed || report.failed)
      this.ctx.logger.info(report, "reconciliation repaired deliveries");
    return report;
  }

  private repair(row: QueuedRow): Promise<Outcome> {
    return repairDelivery(this.ctx, {
      webhookId: row.webhook_id,
      what: "delivery",
      workflowId: async () =>
        row.workflow_id ??
        (await this.derivedWorkflowId(row.webhook_id)) ??
        (await this.findWorkflow(row.webhook_id)),
      close: (reason) => failPending(this.ctx.db.prisma, row.webhook_id, reason),
      restart: (workflowId, status) => this.restart(row.webhook_id, workflowId, status),
    });
  }

  /**
   * Rows written before attempts recorded their workflow: the id every delivery of an event
   * gets, `delivery:<config id>:<key>` (workers/start-delivery.ts), recomputed from the row's
   * event. A webhook id is derived from its workflow id, so the match is checked; it fails
   * for replays (their id holds the replay's key) and events without an idempotency key
   * (their key hashes the message as published, which the row does not keep).
   */
  private async derivedWorkflowId(webhookId: string): Promise<string | undefined> {
    const row = await this.ctx.db.prisma.attempt.findFirst({
      where: { webhookId },
      orderBy: { retryAttempt: "asc" },
      select: { configId: true, payload: true, eventId: true, replayOf: true },
    });
    if (!row || row.replayOf) return undefined;
    const event = await eventOfRow(this.ctx.db.pool, row);
    if (!event?.idempotencyKey) return undefined;
    const candidate = deliveryWorkflowId(row.configId, deliveryKey(event.idempotencyKey, Buffer.alloc(0)));
    return webhookIdFor(candidate) === webhookId ? candidate : undefined;
  }

  /** Rows written before attempts recorded their workflow, for other ids: by the WebhookId search attribute. */
  private async findWorkflow(webhookId: string): Promise<string | undefined> {
    for await (const w of this.ctx.temporal.workflow.list({ query: `${WebhookId.name} = "${webhookId}"` })) {
      return w.workflowId;
    }
    return undefined;
  }

  /** Starts the delivery again from its newest row when config and caps allow, else says why not. */
  private async restart(webhookId: string, workflowId: string, workflow: string): Promise<Restart> {
    const { prisma } = this.ctx.db;
    const rows = await prisma.attempt.findMany({ where: { webhookId }, orderBy: { retryAttempt: "asc" } });
    const first = rows[0];
    const last = rows.at(-1);
    if (
      !first ||
      !last ||
      !rows.some((r) => r.status === AttemptStatus.toRetry || r.status === AttemptStatus.retrying)
    )
      return "ended"; // closed meanwhile by its own workflow or another reconciler
    const policy = deliveryPolicy(this.ctx);
    const config = await prisma.config.findUnique({ where: { id: last.configId } });
    const next = last.retryAttempt + 1;
    let reason = whyNoFurtherTry({
      config,
      retryAttempt: next,
      policy,
      firstAttemptAt: first.createdAt,
      now: Date.now(),
    });
    const event = await eventOfRow(this.ctx.db.pool, last);
    if (!event) reason ??= "its event is no longer stored";
    if (reason || !config || !event) return { close: `${reason} (workflow ${workflow.toLowerCase()})` };
    const attempts = rows.map(summarize);
    const { started } = await startDelivery(this.ctx, config, event, workflowId, last.replayOf ?? undefined, {
      webhookId,
      resume: { retryAttempt: next, attempts },
    });
    return started ? "started" : "already started";
  }
}

/**
 * Runs a reconciliation tick every --retry-period until stopped. Several
 * processes may run it: restarts are idempotent (same workflow id) and a close
 * only touches rows still queued.
 */
export function startReconciler(
  ctx: ProcessContext,
  everyTick?: () => Promise<void>,
): { stop(): Promise<void> } {
  const reconciler = new Reconciler(ctx);
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const loop = () => {
    running = (async () => {
      try {
        await reconciler.tick();
        await everyTick?.();
      } catch (err) {
        const e = err as Error;
        ctx.logger.warn(
          { err: e.message, ...(e instanceof Prisma.PrismaClientKnownRequestError ? { code: e.code } : {}) },
          "reconciliation tick failed; next one in --retry-period",
        );
      }
      if (!stopped) timer = setTimeout(loop, ctx.options.reconcileEvery);
    })();
  };
  timer = setTimeout(loop, ctx.options.reconcileEvery);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
