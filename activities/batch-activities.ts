import { randomUUID } from "node:crypto";
import { ApplicationFailure, Context } from "@temporalio/activity";
import type pg from "pg";
import type { PrismaClient } from "../common/db/database.js";
import type { Logger } from "../common/logger.js";
import { findConfig } from "../core/config-rows.js";
import type { ConfigSecrets } from "../core/config-secrets.js";
import type { EgressPolicy } from "../core/egress-policy.js";
import { type EndpointAuth, openStoredAuth, type StoredAuth } from "../core/endpoint-auth-rows.js";
import { recordAttempt as recordAttemptMetric } from "../core/metrics.js";
import { SealedValueError } from "../core/sealing.js";
import { type EventRef, readStoredEvents } from "../core/stored-events.js";
import type { Config } from "../generated/prisma/client.js";
import {
  claimForRetry,
  failPending,
  findAttempt,
  firstAttemptAt,
  insertFirstAttempts,
  recordAttempt,
} from "./attempts-store.js";
import { batchBody } from "./batch-body.js";
import { decide, whyNoFurtherTry } from "./delivery-policy.js";
import type { DeliveryPolicy } from "./delivery-types.js";
import { sendWithEndpointAuth } from "./endpoint-auth-send.js";
import type { SendResult } from "./http-send.js";
import type { OAuthTokens } from "./oauth-tokens.js";
import type { RateLimitGate } from "./rate-limit-gate.js";
import { activeSecrets } from "./secrets.js";
import { CLAIM_LEASE_MS, claimBeforeSend, releaseClaim } from "./send-claims.js";
import { adoptIntoBatch, closeUnsent } from "./unsent-deliveries.js";
import { writeAfterPost, writeDeadline } from "./write-after-post.js";

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

/** Ends each event's delivery with the reason: its queued row, or its waiting unsent row. */
async function closeMembers(deps: BatchDeps, webhookIds: string[], reason: string): Promise<void> {
  for (const id of webhookIds) {
    await failPending(deps.prisma, id, reason);
    await closeUnsent(deps.pool, id, reason);
  }
}

export function createBatchActivities(deps: BatchDeps) {
  const { prisma, pool, logger } = deps;

  /**
   * POSTs the batch once and writes each event's attempt row. The send claim is the first
   * event's attempt (send-claims.ts), and its row is written last: a re-run that finds it
   * finds every row, and one that does not may POST again, as a single delivery may.
   */
  const sendBatch = async (input: BatchSendInput): Promise<BatchOutcome> => {
    const first = input.members[0];
    if (!first) return { skipped: "no event left in the batch" };
    const { workflowExecution, activityId, attempt: activityAttempt } = Context.current().info;
    const deadline = writeDeadline();
    const claim = {
      webhookId: first.webhookId,
      retryAttempt: input.retryAttempt,
      owner: `${workflowExecution?.runId ?? "-"}/${activityId}/${activityAttempt}/${randomUUID()}`,
      leaseMs: CLAIM_LEASE_MS,
    };
    const { config, attemptWritten, claimed, auth } = await claimBeforeSend(pool, input.configId, claim);
    if (attemptWritten || !claimed) {
      const done = await findAttempt(prisma, first.webhookId, input.retryAttempt);
      if (done)
        return {
          status: done.status === "toRetry" ? "to retry" : done.status === "success" ? "success" : "failed",
          statusCode: done.statusCode,
          nextRetryAfter: done.nextRetryAfter?.toISOString() ?? null,
          error: done.error,
        };
      throw ApplicationFailure.create({
        message: `attempt ${input.retryAttempt} of batch ${input.batchId} is being sent by another execution`,
        type: "SendClaimed",
        nextRetryDelay: CLAIM_LEASE_MS,
      });
    }
    const ids = input.members.map((m) => m.webhookId);
    if (!config?.active) {
      const reason = config ? "config deactivated" : "config deleted";
      await closeMembers(deps, ids, reason);
      await releaseClaim(pool, claim);
      return { skipped: reason };
    }
    if (input.rateLimited && deps.rateLimit && URL.canParse(config.endpoint)) {
      const waitMs = await deps.rateLimit.acquire(config.id, new URL(config.endpoint).host);
      if (waitMs > 0) {
        await releaseClaim(pool, claim);
        return { waitMs };
      }
    }
    // Events removed by retention meanwhile leave the batch (each closed with the reason).
    const events: { webhookId: string; id: string; body: string }[] = [];
    const stored = await readStoredEvents(pool, [...new Set(input.members.map((m) => m.eventRef.id))]);
    for (const m of input.members) {
      const event = stored.get(m.eventRef.id);
      if (event) events.push({ webhookId: m.webhookId, id: m.eventRef.id, body: event.body });
      else await closeMembers(deps, [m.webhookId], `event ${m.eventRef.id} is no longer stored`);
    }
    if (events.length === 0) {
      await releaseClaim(pool, claim);
      return { skipped: "no stored event left in the batch" };
    }
    const result = await post(input, config, auth, events);
    const now = new Date();
    const firstAt = input.retryAttempt === 0 ? now : ((await firstAttemptAt(prisma, first.webhookId)) ?? now);
    const decision = result.permanent
      ? { status: "failed" as const, nextRetryAfter: null }
      : decide({
          statusCode: result.statusCode,
          retryAttempt: input.retryAttempt,
          policy: input.policy,
          firstAttemptAt: firstAt,
          now,
          retryAfterMs: result.retryAfterMs,
        });
    const error = [result.error, decision.reason].filter(Boolean).join("; ") || null;
    const shared = {
      config,
      statusCode: result.statusCode,
      ...(result.permanent ? {} : { durationMs: result.durationMs }),
      status: decision.status,
      nextRetryAfter: decision.nextRetryAfter,
      error,
      workflowId: workflowExecution?.workflowId,
      batchId: input.batchId,
    };
    // A first attempt: every event's row in one statement. A retry: one transaction per
    // event (its claimed rows move with it), the first event's row last: it holds the
    // claim, which its row ends.
    const ordered = [...events.slice(1), ...events.filter((e) => e.webhookId === first.webhookId)];
    await writeAfterPost(
      async () => {
        if (input.retryAttempt === 0)
          return insertFirstAttempts(
            pool,
            shared,
            ordered.map((e) => ({ webhookId: e.webhookId, eventId: e.id })),
          );
        for (const e of ordered)
          await recordAttempt(
            { prisma, pool },
            { ...shared, webhookId: e.webhookId, eventId: e.id, retryAttempt: input.retryAttempt },
          );
      },
      deadline,
      logger,
      { webhookId: first.webhookId, retryAttempt: input.retryAttempt },
    );
    if (!events.some((e) => e.webhookId === first.webhookId)) await releaseClaim(pool, claim);
    for (const _ of events) recordAttemptMetric(decision.status, result.statusCode, result.durationMs);
    logger.info(
      {
        batchId: input.batchId,
        configId: config.id,
        events: events.length,
        retryAttempt: input.retryAttempt,
        statusCode: result.statusCode,
        status: decision.status,
        ms: result.durationMs,
        ...(result.error ? { error: result.error } : {}),
      },
      "webhook batch attempt",
    );
    return {
      // A new row is never `retrying` (that is a claimed row's state).
      status: decision.status as "success" | "to retry" | "failed",
      statusCode: result.statusCode,
      nextRetryAfter: decision.nextRetryAfter?.toISOString() ?? null,
      error,
    };
  };

  const post = async (
    input: BatchSendInput,
    config: Config,
    stored: StoredAuth | null,
    events: { webhookId: string; body: string }[],
  ): Promise<SendResult> => {
    let signing: string[];
    let auth: EndpointAuth | null;
    try {
      signing = activeSecrets(deps.secrets.openConfig(config), new Date());
      auth = stored ? openStoredAuth(deps.secrets, config.id, stored) : null;
    } catch (err) {
      // Never a POST with a wrong signature (as for a single delivery).
      if (!(err instanceof SealedValueError)) throw err;
      return { statusCode: 0, error: `not sent: ${err.message}`, responseExcerpt: "", durationMs: 0 };
    }
    if (!URL.canParse(config.endpoint))
      return {
        statusCode: 0,
        error: `endpoint ${JSON.stringify(config.endpoint)} is not a URL`,
        permanent: true,
        responseExcerpt: "",
        durationMs: 0,
      };
    return sendWithEndpointAuth(
      {
        endpoint: config.endpoint,
        webhookId: input.batchId,
        batchIds: events.map((e) => e.webhookId),
        body: batchBody(events.map((e) => e.body)),
        secrets: signing,
        // Each event's idempotency key is in its element; the batch has none of its own.
        idempotencyKey: "",
        test: false,
        timeoutMs: input.policy.sendTimeoutMs ?? deps.sendTimeoutMs,
        egress: deps.egress,
      },
      auth,
      config.id,
      deps.oauthTokens,
    );
  };

  return {
    sendBatch,

    /**
     * Before a batch's re-send: claims each event's queued row. Events closed meanwhile (a
     * cancel, reconciliation) leave the batch; the caps are the first event's (all share them).
     */
    async claimBatchRetry(input: BatchSendInput): Promise<{ members: BatchMember[] } | { reason: string }> {
      const members: BatchMember[] = [];
      let dueAt: number | undefined;
      for (const m of input.members) {
        const claimed = await claimForRetry(prisma, m.webhookId, input.retryAttempt);
        if (!claimed) continue;
        members.push(m);
        if (claimed.dueAt) dueAt = Math.max(dueAt ?? 0, claimed.dueAt.getTime());
      }
      if (members.length === 0) return { reason: "every event of the batch was closed" };
      const now = Date.now();
      const reason = whyNoFurtherTry({
        config: await findConfig(pool, input.configId),
        retryAttempt: input.retryAttempt,
        policy: input.policy,
        firstAttemptAt: await firstAttemptAt(prisma, members[0]!.webhookId),
        now: dueAt ? Math.min(now, dueAt) : now,
      });
      if (reason === undefined) return { members };
      await closeMembers(
        deps,
        members.map((m) => m.webhookId),
        reason,
      );
      return { reason };
    },

    /**
     * Run by the collector (a local activity) before it starts a batch's workflow: the events'
     * waiting rows name that workflow from then on (activities/unsent-deliveries.ts says why).
     */
    async handRowsToBatch({
      webhookIds,
      workflowId,
    }: {
      webhookIds: string[];
      workflowId: string;
    }): Promise<void> {
      await adoptIntoBatch(pool, webhookIds, workflowId);
    },

    /** Ends the batch's events without a send (cancel, config gone, collector closed). */
    async closeBatch({ webhookIds, reason }: { webhookIds: string[]; reason: string }): Promise<void> {
      await closeMembers(deps, webhookIds, reason);
      logger.info({ closed: webhookIds.length, reason }, "batched deliveries closed");
    },
  };
}

export type BatchActivities = ReturnType<typeof createBatchActivities>;
