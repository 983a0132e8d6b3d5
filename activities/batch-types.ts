import type pg from "pg";
import type { PrismaClient } from "../common/db/database.js";
import type { Logger } from "../common/logger.js";
import type { ConfigSecrets } from "../core/config-secrets.js";
import type { EgressPolicy } from "../core/egress-policy.js";
import type { EventRef } from "../core/stored-events.js";
import type { DeliveryPolicy } from "./delivery-types.js";
import type { OAuthTokens } from "./oauth-tokens.js";
import type { RateLimitGate } from "./rate-limit-gate.js";

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

export interface BatchDeps {
  prisma: PrismaClient;
  pool: pg.Pool;
  logger: Logger;
  sendTimeoutMs: number;
  egress: EgressPolicy;
  secrets: ConfigSecrets;
  oauthTokens: OAuthTokens;
  rateLimit?: RateLimitGate | undefined;
}
