import { Context } from "@temporalio/activity";
import type { BatchDeps, BatchOutcome, BatchSendInput } from "./batch-types.js";
import { closeDeliveries } from "./close-deliveries.js";
import { jobOf, sendOnce } from "./send-pipeline.js";

// One send of a batch: the send pipeline (send-pipeline.ts) with the batch's events as its
// members, POSTed as one JSON array under the batch's id. The claim is the first event's
// attempt; every event's row is written in one statement with the batch's outcome, so a
// re-run finds all of them or none. A wait for the rate limit is the batch workflow's to
// sleep; an event retention removed leaves the batch, its delivery closed with the reason.

/** POSTs the batch once and writes each event's attempt row. */
export async function sendBatch(deps: BatchDeps, input: BatchSendInput): Promise<BatchOutcome> {
  const end = await sendOnce(
    deps,
    {
      ...jobOf(input),
      members: input.members.map((m) => ({
        webhookId: m.webhookId,
        eventId: m.eventRef.id,
        acceptedAt: m.acceptedAt,
      })),
      batchId: input.batchId,
      workflowId: Context.current().info.workflowExecution?.workflowId,
    },
    {
      wait: async (_, waitMs) => ({ waitMs }),
      endMember: async (m, _, reason) => void (await closeDeliveries(deps, [m.webhookId], reason)),
    },
  );
  if (!("sent" in end)) return end;
  const { status, statusCode, nextRetryAfter, error } = end.sent;
  // A row found `retrying` was claimed by the next attempt already: this one did not succeed.
  return { status: status === "retrying" ? "failed" : status, statusCode, nextRetryAfter, error };
}
