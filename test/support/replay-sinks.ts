import type { InjectedSinks } from "@temporalio/worker";
import type { DeliverySinks } from "../../workflows/delivery-sinks.js";

/**
 * The delivery workflow's sinks for a replay worker. A replay calls none of them (sinks are
 * not part of the history); registered, they keep the worker from logging every call as
 * "an unregistered external sink" (thousands of lines in a test run's output).
 */
export const replaySinks: InjectedSinks<DeliverySinks> = {
  deliveries: { sendStarted: { fn: () => {} }, sendFinished: { fn: () => {} } },
};
