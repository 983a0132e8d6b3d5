import { WorkflowNotFoundError } from "@temporalio/client";
import type { ProcessContext } from "../core/process-context.js";

// What both of reconciliation's walks share (queued attempt rows, reconciliation.ts; unsent
// rows of first sends that wait, reconcile-unsent.ts): how a delivery's workflow stands,
// which states rule out a restart, and how many repairs run at once.

export type Outcome = "running" | "restarted" | "closed" | "failed";

/** Why a workflow that is no longer running left its delivery queued, when that rules out a restart. */
export const CLOSED_FOR_GOOD: Record<string, string> = {
  TERMINATED: "workflow terminated",
  CANCELLED: "cancelled",
  COMPLETED: "workflow completed without closing its row",
};

/** Deliveries checked and repaired at once within a tick. */
const PARALLEL_REPAIRS = 8;

/** Repairs `rows` a few at a time (each a Temporal describe and perhaps a start), in order. */
export async function repairAll<T>(rows: T[], repair: (row: T) => Promise<Outcome>): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  for (let i = 0; i < rows.length; i += PARALLEL_REPAIRS)
    outcomes.push(...(await Promise.all(rows.slice(i, i + PARALLEL_REPAIRS).map(repair))));
  return outcomes;
}

/** The workflow's status name, or MISSING when Temporal has no such workflow. */
export async function workflowStatus(rt: ProcessContext, workflowId: string): Promise<string> {
  try {
    return (await rt.temporal.workflow.getHandle(workflowId).describe()).status.name;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return "MISSING";
    throw err;
  }
}
