import type { EventRef } from "../core/stored-events.js";
import type { SendDeps } from "./delivery-deps.js";
import type { DeliveryPolicy } from "./delivery-types.js";

// The sends of a batch (workflows/batch-delivery.ts): one POST of its events' bodies as a
// JSON array, and one attempt row per event with the batch's outcome, so each event's
// delivery reads as any other (GET /webhooks/{id}, lists, stats, replay).

/** One event of a batch: its own delivery, with its webhook id and stored event. */
export interface BatchMember {
  webhookId: string;
  eventRef: EventRef;
  acceptedAt: string;
}

export interface BatchSendInput {
  batchId: string;
  configId: string;
  /** The events still in the batch, in acceptance order (a retry leaves out those closed meanwhile). */
  members: BatchMember[];
  policy: DeliveryPolicy;
  retryAttempt: number;
  /** Ask the rate limit service before the POST: one hit per POST, whatever its events. */
  rateLimited?: boolean;
}

/** What a batch's send did: its outcome (the same for every event), or nothing to send. */
export type BatchOutcome =
  | {
      status: "success" | "to retry" | "failed";
      statusCode: number;
      nextRetryAfter: string | null;
      error: string | null;
    }
  | { skipped: string }
  /** The rate limit service said wait: nothing sent, nothing counted, no row written. */
  | { waitMs: number };

/** A batch sends with what a delivery sends with (send-pipeline.ts). */
export type BatchDeps = SendDeps;
