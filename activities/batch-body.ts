import { webhookIdFor } from "../core/event-message.js";

// What one POST of a batch carries (README "Batched delivery"): the events' bodies as one
// JSON array, in acceptance order, signed as one body under the batch's own id.

/** Lists the webhook ids of a batch's events, in the order of the array, comma-separated. */
export const BATCH_IDS_HEADER = "svc-webhook-batch-ids";

/**
 * The batch's `svc-webhook-id`: a UUID derived from its events' webhook ids, so each retry
 * of the same batch carries the same id (as a single delivery's retries carry its webhook
 * id), and a receiver deduplicates a batch as it deduplicates one event.
 */
export const batchIdOf = (webhookIds: readonly string[]): string =>
  webhookIdFor(`batch:${webhookIds.join(",")}`);

/**
 * The events' bodies (each already JSON, exactly what its single delivery would send) as
 * one JSON array, joined rather than parsed and re-serialized so each element keeps its bytes.
 */
export const batchBody = (bodies: readonly string[]): string => `[${bodies.join(",")}]`;
