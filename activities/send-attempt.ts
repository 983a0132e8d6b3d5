import { ApplicationFailure } from "@temporalio/activity";
import { type EventRef, storeEvent } from "../core/stored-events.js";
import { summarize } from "./attempts-store.js";
import type { DeliveryDeps } from "./delivery-deps.js";
import type { SendAttemptInput, SendOutcome } from "./delivery-types.js";
import { waitForPermission } from "./send-permission.js";
import { jobOf, sendOnce } from "./send-pipeline.js";
import { deliveryWorkflowId, endUnsendable } from "./unsendable.js";

// One delivery's send: the send pipeline (send-pipeline.ts) with one member. A wait for
// the rate limit queues the delivery (its claimed row, or an unsent row before its first
// send); an event retention removed ends it with a row that says why.

/**
 * POSTs attempt `retryAttempt` once and writes its row; a retried or re-run execution of
 * the send returns that row instead (send-pipeline.ts says how). `onPosting` is told as the
 * POST leaves.
 */
export async function sendAttemptOnce(
  deps: DeliveryDeps,
  input: SendAttemptInput,
  onPosting?: () => void,
): Promise<SendOutcome> {
  const ref = await eventRefOf(deps, input);
  const end = await sendOnce(
    deps,
    {
      ...jobOf(input),
      members: [
        {
          webhookId: input.webhookId,
          eventId: ref.id,
          replayOf: input.replayOf,
          acceptedAt: input.queuedAt ?? input.acceptedAt,
        },
      ],
      workflowId: deliveryWorkflowId(input),
      onPosting,
    },
    {
      wait: (config, waitMs, why) => waitForPermission(deps, input, config, ref.id, waitMs, why),
      endMember: (_, config, reason) => endUnsendable(deps, input, config, reason, null),
    },
  );
  if (!("sent" in end)) return end;
  // The claim's delivery is the only one: its row is there once the send was made.
  const row = end.sent.row!;
  const budgetMs = input.localFirstBudgetMs;
  if (row.status === "success" && budgetMs && (row.durationMs ?? budgetMs) < budgetMs)
    deps.localFirst?.recovered(input.configId);
  return { attempt: summarize(row) };
}

/**
 * The delivery's stored event. A delivery started before events were stored by
 * reference carries the event itself: it is stored here, once per send (idempotent).
 */
async function eventRefOf({ pool }: DeliveryDeps, input: SendAttemptInput): Promise<EventRef> {
  if (input.eventRef) return input.eventRef;
  if (input.event) return (await storeEvent(pool, input.event)).ref;
  throw ApplicationFailure.nonRetryable(`webhook ${input.webhookId}: the delivery names no event`);
}
