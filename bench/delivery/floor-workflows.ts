import { proxyActivities, proxyLocalActivities, upsertSearchAttributes } from "@temporalio/workflow";
import { WebhookAttemptCount, WebhookDeliveryStatus } from "../../workflows/search-attributes.js";

// The smallest workflows shaped like a delivery, for bench/delivery/temporal-floor:
// what Temporal itself costs, with no HTTP, signing or database in the activity.

export interface FloorActivities {
  noop(): Promise<string>;
}

const done = () =>
  upsertSearchAttributes([
    { key: WebhookDeliveryStatus, value: "success" },
    { key: WebhookAttemptCount, value: 1 },
  ]);

/** One activity on a second task queue, as deliveries send on `<queue>-sends`. */
export async function floorRemote(sendQueue: string): Promise<void> {
  const { noop } = proxyActivities<FloorActivities>({
    startToCloseTimeout: "1 minute",
    taskQueue: sendQueue,
  });
  await noop();
  done();
}

/** The same activity run as a local activity by the workflow worker. */
export async function floorLocal(): Promise<void> {
  const { noop } = proxyLocalActivities<FloorActivities>({ startToCloseTimeout: "1 minute" });
  await noop();
  done();
}
