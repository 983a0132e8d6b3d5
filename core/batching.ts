// Batched delivery (docs/webhooks/ordering-and-batching.md#batched-delivery): what a config's `batch` column holds.

/** A config's batching as stored (null in the column when every event goes alone). */
export interface Batch {
  maxEvents: number;
  maxWaitMs: number;
}

/**
 * Most events in one batch: their webhook ids (36-character UUIDs and a comma each) go in
 * one header, and 200 of them (7 399 bytes) stay under the 8 KiB one header line may take
 * in common servers (nginx's large_client_header_buffers) with Node's 16 KiB for all.
 */
export const MAX_BATCH_EVENTS = 200;

/** Longest a partial batch waits for more events (one minute). */
export const MAX_BATCH_WAIT_MS = 60_000;

/** The config's batching when it batches, else null (whatever the column holds). */
export function batchOf(config: { batch?: unknown }): Batch | null {
  const b = config.batch as Partial<Batch> | null | undefined;
  if (typeof b?.maxEvents !== "number" || typeof b.maxWaitMs !== "number") return null;
  return { maxEvents: b.maxEvents, maxWaitMs: b.maxWaitMs };
}

/** The workflow collecting a batched config's events into batches (workflows/batch-delivery.ts). */
export const batchCollectorId = (configId: string): string => `batch:${configId}`;

/** The workflow sending one batch, and retrying it as a unit. */
export const batchWorkflowId = (configId: string, batchId: string): string => `batch:${configId}:${batchId}`;

/** True for a batch's workflow id, which the attempt rows of all its events share. */
export const isBatchWorkflowId = (workflowId: string): boolean => workflowId.startsWith("batch:");

/** The workflow id of a delivery restarted without one of its own to take up again (a lost batch's event). */
export const restartWorkflowId = (webhookId: string): string => `delivery-restart:${webhookId}`;
