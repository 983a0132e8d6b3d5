import { status } from "@grpc/grpc-js";
import { type Client, isGrpcServiceError } from "@temporalio/client";
import { historyToJSON } from "@temporalio/common/lib/proto-utils.js";

/** What Temporal did for one delivery, from its history: each costs the server work. */
export interface HistoryShape {
  /** Workflow tasks completed (each a round trip to the worker and a history write). */
  workflowTasks: number;
  /** Activities on a task queue (each a matching dispatch and two more history events). */
  activities: number;
  /** Local activities (a marker in the workflow task that ran them). */
  localActivities: number;
  /** Search attribute updates (each a visibility write). */
  searchAttributeUpdates: number;
  historyEvents: number;
  historyBytes: number;
  /** With `absentAsNone`: the share of the ids that had a workflow (an ordered key's own first sends start none). */
  workflows?: number;
}

/**
 * The mean shape over the histories of `workflowIds` (their current runs, or the runs named).
 * `absentAsNone`: an id without a workflow counts as one that cost nothing (else an error).
 */
export async function historyShape(
  client: Client,
  workflowIds: Array<string | { workflowId: string; runId: string }>,
  absentAsNone = false,
): Promise<HistoryShape> {
  const sum: HistoryShape = {
    workflowTasks: 0,
    activities: 0,
    localActivities: 0,
    searchAttributeUpdates: 0,
    historyEvents: 0,
    historyBytes: 0,
    ...(absentAsNone ? { workflows: 0 } : {}),
  };
  for (const id of workflowIds) {
    const handle =
      typeof id === "string"
        ? client.workflow.getHandle(id)
        : client.workflow.getHandle(id.workflowId, id.runId);
    const history = await handle.fetchHistory().catch((err: unknown) => {
      if (absentAsNone && isGrpcServiceError(err) && err.code === status.NOT_FOUND) return undefined;
      throw err;
    });
    if (!history) continue;
    if (sum.workflows !== undefined) sum.workflows++;
    const json = historyToJSON(history);
    const types = (JSON.parse(json) as { events: { eventType: string }[] }).events.map((e) => e.eventType);
    const count = (suffix: string) => types.filter((t) => t.endsWith(suffix)).length;
    sum.workflowTasks += count("WORKFLOW_TASK_COMPLETED");
    sum.activities += count("ACTIVITY_TASK_SCHEDULED");
    sum.localActivities += count("MARKER_RECORDED");
    sum.searchAttributeUpdates += count("UPSERT_WORKFLOW_SEARCH_ATTRIBUTES");
    sum.historyEvents += types.length;
    sum.historyBytes += json.length;
  }
  const n = Math.max(1, workflowIds.length);
  return Object.fromEntries(
    Object.entries(sum).map(([k, v]) => [k, Number((v / n).toFixed(1))]),
  ) as unknown as HistoryShape;
}
