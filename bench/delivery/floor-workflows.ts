import {
  proxyActivities,
  proxyLocalActivities,
  proxySinks,
  type Sinks,
  upsertSearchAttributes,
} from "@temporalio/workflow";
import { WebhookAttemptCount, WebhookDeliveryStatus } from "../../workflows/search-attributes.js";

// The smallest workflows shaped like a delivery, for bench/delivery/temporal-floor:
// what Temporal itself costs, with no HTTP, signing or database in the activity.

export interface FloorActivities {
  noop(): Promise<string>;
}

/** How a floor workflow tells the bench it is done (outside its history, like deliveries' sinks). */
export interface FloorSinks extends Sinks {
  floor: { finished(): void };
}

const { floor } = proxySinks<FloorSinks>();

const done = () => {
  upsertSearchAttributes([
    { key: WebhookDeliveryStatus, value: "success" },
    { key: WebhookAttemptCount, value: 1 },
  ]);
  // Nobody waits on a delivery's result, so nobody waits on the floor's: a client polling
  // for each result would add server and database work deliveries do not have.
  floor.finished();
};

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
