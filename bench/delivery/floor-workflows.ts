import {
  executeChild,
  proxyActivities,
  proxyLocalActivities,
  proxySinks,
  type Sinks,
  upsertSearchAttributes,
  workflowInfo,
} from "@temporalio/workflow";
import { WebhookAttemptCount, WebhookDeliveryStatus } from "../../workflows/search-attributes.js";

// The smallest workflows shaped like a delivery, for bench/delivery/temporal-floor:
// what Temporal itself costs, with no HTTP, signing or database in the activity. Given
// an event, the activity does a delivery's send instead (delivery-io.ts), and the event
// is in the workflow's input and the activity's, as a delivery's is.

/** A send's input in the floor with a delivery's I/O. */
export interface FloorSend {
  configId: string;
  body: string;
  idempotencyKey: string;
}

export interface FloorActivities {
  noop(): Promise<string>;
  /** The send of delivery-io.ts: config read, signed POST, attempt row. */
  send(input: FloorSend, local: boolean): Promise<number>;
}

/** How a floor workflow tells the bench it is done (outside its history, like deliveries' sinks). */
export interface FloorSinks extends Sinks {
  floor: { finished(): void };
}

const { floor } = proxySinks<FloorSinks>();

const done = (upsert = true) => {
  if (upsert) {
    upsertSearchAttributes([
      { key: WebhookDeliveryStatus, value: "success" },
      { key: WebhookAttemptCount, value: 1 },
    ]);
  }
  // Nobody waits on a delivery's result, so nobody waits on the floor's: a client polling
  // for each result would add server and database work deliveries do not have.
  floor.finished();
};

/** One activity on a second task queue, as deliveries send on `<queue>-sends`. */
export async function floorRemote(sendQueue: string, io?: FloorSend): Promise<void> {
  const { noop, send } = proxyActivities<FloorActivities>({
    startToCloseTimeout: "1 minute",
    taskQueue: sendQueue,
  });
  await (io ? send(io, false) : noop());
  done();
}

/** The same activity run as a local activity by the workflow worker. */
export async function floorLocal(io?: FloorSend): Promise<void> {
  const { noop, send } = proxyLocalActivities<FloorActivities>({ startToCloseTimeout: "1 minute" });
  await (io ? send(io, true) : noop());
  done();
}

/** floorLocal without the final upsert: what that one history event and visibility write cost. */
export async function floorLocalNoUpsert(): Promise<void> {
  const { noop } = proxyLocalActivities<FloorActivities>({ startToCloseTimeout: "1 minute" });
  await noop();
  done(false);
}

/** A workflow that does nothing: the least a child workflow per event costs. */
export async function floorChild(): Promise<void> {}

/** `n` children one after the other: the floor of an ordering key that ran each event as a workflow. */
export async function floorSerialChildren(n: number): Promise<void> {
  const { workflowId } = workflowInfo();
  for (let i = 0; i < n; i++) await executeChild(floorChild, { workflowId: `${workflowId}-${i}` });
}
