import { WorkflowNotFoundError } from "@temporalio/client";
import { isBatchWorkflowId, restartWorkflowId } from "../core/batching.js";
import type { ProcessContext } from "../core/process-context.js";
import { describeFailure, permanentFailureOf } from "../core/start-failures.js";

// What both of reconciliation's walks share (queued attempt rows, reconciliation.ts; unsent
// rows of first sends that wait, reconcile-unsent.ts): how one delivery is repaired, which
// workflow states rule out a restart, and how many repairs run at once. Each outcome is
// counted for what happened: `closed` only when rows were closed, `restarted` only when a
// workflow started; a delivery that ended meanwhile (its workflow or another reconciler got
// there first) is `ended`.

export type Outcome = "running" | "restarted" | "closed" | "ended" | "failed";
/**
 * Counts one repair's outcome the moment it is known, so the metric never lags a row a
 * repair just closed (a tick may take long: each repair asks Temporal).
 */
export type Tally = (outcome: Outcome) => void;

/** Why a workflow that is no longer running left its delivery queued, when that rules out a restart. */
export const CLOSED_FOR_GOOD: Record<string, string> = {
  TERMINATED: "workflow terminated",
  CANCELLED: "cancelled",
  COMPLETED: "workflow completed without closing its row",
};

/** Deliveries checked and repaired at once within a tick. */
const PARALLEL_REPAIRS = 8;

/** Repairs `rows` a few at a time (each a Temporal describe and perhaps a start), in order. */
export async function repairAll<T, O = Outcome>(rows: T[], repair: (row: T) => Promise<O>): Promise<O[]> {
  const outcomes: O[] = [];
  for (let i = 0; i < rows.length; i += PARALLEL_REPAIRS)
    outcomes.push(...(await Promise.all(rows.slice(i, i + PARALLEL_REPAIRS).map(repair))));
  return outcomes;
}

/** The workflow's status name, or MISSING when Temporal has no such workflow. */
export async function workflowStatus(ctx: ProcessContext, workflowId: string): Promise<string> {
  try {
    return (await ctx.temporal.workflow.getHandle(workflowId).describe()).status.name;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return "MISSING";
    throw err;
  }
}

/** What a restart did: started a workflow, found one started first, found nothing left to do, or cannot. */
export type Restart = "started" | "already started" | "ended" | { close: string };

/** One delivery as a walk sees it. */
export interface DeliveryRepair {
  webhookId: string;
  /** Its workflow, when it can be found (a row of an older version may not say). */
  workflowId(): Promise<string | undefined>;
  /** "delivery", or what kind of delivery, for the logs. */
  what: string;
  /** Closes what is still queued of it with the reason; how many rows that closed. */
  close(reason: string): Promise<number>;
  /** Starts it again from its rows as `workflowId` (whose status is `status`), or says why not. */
  restart(workflowId: string, status: string): Promise<Restart>;
}

/**
 * Repairs one delivery: a running workflow is left alone; one closed for good, or a
 * delivery that cannot go on, has its rows closed with the reason; a lost one is restarted.
 * A repair that fails for a reason that may pass is tried again next round; one that can
 * never succeed (its config row is unusable, Temporal refuses the input) closes the rows.
 */

export async function repairDelivery(ctx: ProcessContext, d: DeliveryRepair): Promise<Outcome> {
  const close = async (reason: string, workflow: string): Promise<Outcome> => {
    const closed = await d.close(reason);
    ctx.logger.warn(
      { webhookId: d.webhookId, workflow, reason, closed },
      closed ? `reconciliation closed a ${d.what}` : `reconciliation found the ${d.what} ended meanwhile`,
    );
    return closed > 0 ? "closed" : "ended";
  };
  try {
    const found = await d.workflowId();
    const status = found ? await workflowStatus(ctx, found) : "MISSING";
    if (status === "RUNNING") return "running";
    const final = CLOSED_FOR_GOOD[status];
    if (final) return await close(final, status);
    // A delivery whose workflow cannot be found at all gets one of its own; so does an event
    // of a lost batch, whose workflow id its batch's other events share (each restarts alone).
    const workflowId = found && !isBatchWorkflowId(found) ? found : restartWorkflowId(d.webhookId);
    const restart = await d.restart(workflowId, status);
    if (typeof restart === "object") return await close(restart.close, status);
    if (restart === "ended") return "ended";
    ctx.logger.warn(
      { webhookId: d.webhookId, workflowId, workflow: status },
      restart === "started"
        ? `reconciliation restarted a ${d.what} whose workflow was not running`
        : `reconciliation found the ${d.what} restarted meanwhile`,
    );
    // Not started: another reconciler (or a redelivery) started the same workflow id first.
    return restart === "started" ? "restarted" : "running";
  } catch (err) {
    const permanent = permanentFailureOf(err);
    if (permanent) return close(permanent.message, "NOT RESTARTABLE");
    ctx.logger.warn(
      { webhookId: d.webhookId, err: describeFailure(err) },
      `reconciliation could not repair a ${d.what}; next round tries again`,
    );
    return "failed";
  }
}
