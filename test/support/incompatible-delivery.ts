import { proxyActivities, sleep } from "@temporalio/workflow";
import type { DeliveryActivities } from "../../activities/delivery-activities.js";
import type { DeliveryInput } from "../../activities/delivery-types.js";

// A deliberately incompatible change to the delivery workflow (a timer before
// the first send), used to show that replaying the recorded histories catches
// changes that would break running deliveries.

export async function deliverWebhook(input: DeliveryInput): Promise<void> {
  const { sendAttempt } = proxyActivities<DeliveryActivities>({
    taskQueue: input.sendTaskQueue,
    startToCloseTimeout: "2 minutes",
  });
  await sleep("1 second");
  await sendAttempt({ ...input, retryAttempt: 0 });
}

/** The same kind of change to the ordered-delivery workflow (a timer before its first command). */
export async function orderedDelivery(): Promise<void> {
  await sleep("1 second");
}

/** The same kind of change to the batched-delivery workflows (a timer before their first command). */
export async function collectBatches(): Promise<void> {
  await sleep("1 second");
}
export async function deliverBatch(): Promise<void> {
  await sleep("1 second");
}

/** And to the ordered key's sequencer. */
export async function keySequencer(): Promise<void> {
  await sleep("1 second");
}
