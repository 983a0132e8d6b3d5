// What one POST of a batch carries (docs/webhooks/ordering-and-batching.md#batched-delivery): the events' bodies as one
// JSON array, in acceptance order, signed as one body under the batch's own id (a UUID
// the collecting workflow draws, the same on every retry of the batch).

/** Lists the webhook ids of a batch's events, in the order of the array, comma-separated. */
export const BATCH_IDS_HEADER = "svc-webhook-batch-ids";

/**
 * The events' bodies (each already JSON, exactly what its single delivery would send) as
 * one JSON array, joined rather than parsed and re-serialized so each element keeps its bytes.
 */
export const batchBody = (bodies: readonly string[]): string => `[${bodies.join(",")}]`;
