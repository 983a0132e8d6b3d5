import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  proxyLocalActivities,
} from "@temporalio/workflow";
import type { DeliveryActivities } from "../activities/delivery-activities.js";
import type { DeliveryInput, LocalFirstOutcome } from "../activities/delivery-types.js";

// --send-mode local-first: a delivery's first send as a local activity of the workflow
// worker, within its budget (activities/local-first.ts). One definition for the two
// workflows that make it: the delivery workflow, and an ordered key's workflow, which sends
// its head's first attempt itself (workflows/ordered-delivery.ts) and hands what it did to
// the head's delivery workflow (DeliveryInput.firstSend) only when the delivery goes on.

/** A local first send answers within its budget by itself; this only bounds one that is stuck. */
const LOCAL_FIRST_MARGIN_MS = 10_000;

/**
 * Sends attempt 0 of `input` locally. A send that fails for any reason hands over to the
 * sends queue instead; a local activity's failure may come unwrapped (seen after a worker was
 * killed mid-send: "being sent by another execution"), so both forms do. Never cancelled:
 * its attempt row is written before the workflow reacts.
 */
export function sendFirstLocal(
  input: DeliveryInput,
  budgetMs: number,
  rateLimited: boolean,
  /** The delivery's own workflow id, when another workflow sends for it (its rows name it). */
  deliveryWorkflowId?: string,
): Promise<LocalFirstOutcome> {
  const { sendFirstLocally } = proxyLocalActivities<DeliveryActivities>({
    startToCloseTimeout: budgetMs + LOCAL_FIRST_MARGIN_MS,
    retry: { maximumAttempts: 1 },
  });
  return CancellationScope.nonCancellable(() =>
    sendFirstLocally({
      ...input,
      rateLimited,
      retryAttempt: 0,
      budgetMs,
      ...(deliveryWorkflowId ? { deliveryWorkflowId } : {}),
    }),
  ).catch((err: unknown) => {
    if (!(err instanceof ActivityFailure || err instanceof ApplicationFailure)) throw err;
    return { handedOver: `local send failed: ${err.message}`, detached: false };
  });
}
