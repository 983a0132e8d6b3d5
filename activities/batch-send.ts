import { randomUUID } from "node:crypto";
import { ApplicationFailure, Context } from "@temporalio/activity";
import { type EndpointAuth, openStoredAuth, type StoredAuth } from "../core/endpoint-auth-rows.js";
import { observeDeliveryEnd, recordAttempt as recordAttemptMetric } from "../core/metrics.js";
import { SealedValueError } from "../core/sealing.js";
import { readStoredEvents } from "../core/stored-events.js";
import type { Config } from "../generated/prisma/client.js";
import {
  failPending,
  findAttempt,
  firstAttemptAt,
  insertFirstAttempts,
  recordAttempt,
} from "./attempts-store.js";
import { batchBody } from "./batch-body.js";
import type { BatchDeps, BatchOutcome, BatchSendInput } from "./batch-types.js";
import { decide } from "./delivery-policy.js";
import { sendWithEndpointAuth } from "./endpoint-auth-send.js";
import type { SendResult } from "./http-send.js";
import { activeSecrets } from "./secrets.js";
import { CLAIM_LEASE_MS, claimBeforeSend, releaseClaim } from "./send-claims.js";
import { permission } from "./send-permission.js";
import { closeUnsent } from "./unsent-deliveries.js";
import { writeAfterPost } from "./write-after-post.js";

// One send of a batch, step by step: claim the first event's attempt, check the config, take
// the rate limit's permission, read the events still stored, POST them as one JSON array,
// and write each event's attempt row with the batch's outcome.

/** An event of the batch as it is sent: its delivery, stored event id and body. */
interface BatchEvent {
  webhookId: string;
  id: string;
  body: string;
}

/** Ends each event's delivery with the reason: its queued row, or its waiting unsent row. */
export async function closeMembers(deps: BatchDeps, webhookIds: string[], reason: string): Promise<void> {
  for (const id of webhookIds) {
    await failPending(deps.prisma, id, reason);
    await closeUnsent(deps.pool, id, reason);
  }
}

/**
 * POSTs the batch once and writes each event's attempt row. The send claim is the first
 * event's attempt (send-claims.ts), and its row is written last: a re-run that finds it
 * finds every row, and one that does not may POST again, as a single delivery may.
 */
export async function sendBatch(deps: BatchDeps, input: BatchSendInput): Promise<BatchOutcome> {
  const { prisma, pool, logger } = deps;
  const first = input.members[0];
  if (!first) return { skipped: "no event left in the batch" };
  const { workflowExecution, activityId, attempt: activityAttempt } = Context.current().info;
  const claim = {
    webhookId: first.webhookId,
    retryAttempt: input.retryAttempt,
    owner: `${workflowExecution?.runId ?? "-"}/${activityId}/${activityAttempt}/${randomUUID()}`,
    leaseMs: CLAIM_LEASE_MS,
  };
  const { config, attemptWritten, claimed, auth } = await claimBeforeSend(pool, input.configId, claim);
  if (attemptWritten || !claimed) return earlierOutcome(deps, input, first.webhookId);
  const ids = input.members.map((m) => m.webhookId);
  if (!config?.active) {
    const reason = config ? "config deactivated" : "config deleted";
    await closeMembers(deps, ids, reason);
    await releaseClaim(pool, claim);
    return { skipped: reason };
  }
  if (input.rateLimited && URL.canParse(config.endpoint)) {
    const waitMs = await permission(deps, config);
    if (waitMs > 0) {
      await releaseClaim(pool, claim);
      return { waitMs };
    }
  }
  const events = await storedEvents(deps, input);
  if (events.length === 0) {
    await releaseClaim(pool, claim);
    return { skipped: "no stored event left in the batch" };
  }
  const result = await post(deps, input, config, auth, events);
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
  await writeAfterPost(() => writeRows(deps, input, first.webhookId, events, shared), logger, {
    webhookId: first.webhookId,
    retryAttempt: input.retryAttempt,
  });
  if (!events.some((e) => e.webhookId === first.webhookId)) await releaseClaim(pool, claim);
  for (const _ of events) recordAttemptMetric(decision.status, result.statusCode, result.durationMs);
  observeDeliveryEnd(config.tenantId, decision.status, now, input.members, events);
  logBatchAttempt(deps, input, config, events, result, decision.status);
  return {
    // A new row is never `retrying` (that is a claimed row's state).
    status: decision.status as "success" | "to retry" | "failed",
    statusCode: result.statusCode,
    nextRetryAfter: decision.nextRetryAfter?.toISOString() ?? null,
    error,
  };
}

/** The attempt is written (its outcome, from the first event's row), or another execution sends it. */
async function earlierOutcome(
  { prisma }: BatchDeps,
  input: BatchSendInput,
  firstWebhookId: string,
): Promise<BatchOutcome> {
  const done = await findAttempt(prisma, firstWebhookId, input.retryAttempt);
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

/** The events still stored; those removed by retention meanwhile leave the batch (each closed with the reason). */
async function storedEvents(deps: BatchDeps, input: BatchSendInput): Promise<BatchEvent[]> {
  const events: BatchEvent[] = [];
  const stored = await readStoredEvents(deps.pool, [...new Set(input.members.map((m) => m.eventRef.id))]);
  for (const m of input.members) {
    const event = stored.get(m.eventRef.id);
    if (event) events.push({ webhookId: m.webhookId, id: m.eventRef.id, body: event.body });
    else await closeMembers(deps, [m.webhookId], `event ${m.eventRef.id} is no longer stored`);
  }
  return events;
}

/** The row every event of the batch gets: the batch's outcome. */
type SharedRow = Omit<Parameters<typeof recordAttempt>[1], "webhookId" | "eventId" | "retryAttempt">;

/**
 * A first attempt: every event's row in one statement. A retry: one transaction per
 * event (its claimed rows move with it), the first event's row last: it holds the
 * claim, which its row ends.
 */
async function writeRows(
  { prisma, pool }: BatchDeps,
  input: BatchSendInput,
  firstWebhookId: string,
  events: BatchEvent[],
  shared: SharedRow,
): Promise<void> {
  const ordered = [...events.slice(1), ...events.filter((e) => e.webhookId === firstWebhookId)];
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
}

/** Signs the events' JSON array with the config's secrets and POSTs it with the endpoint's auth. */
async function post(
  deps: BatchDeps,
  input: BatchSendInput,
  config: Config,
  stored: StoredAuth | null,
  events: { webhookId: string; body: string }[],
): Promise<SendResult> {
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
}

function logBatchAttempt(
  { logger }: BatchDeps,
  input: BatchSendInput,
  config: Config,
  events: BatchEvent[],
  result: SendResult,
  status: string,
): void {
  logger.info(
    {
      batchId: input.batchId,
      configId: config.id,
      events: events.length,
      retryAttempt: input.retryAttempt,
      statusCode: result.statusCode,
      status,
      ms: result.durationMs,
      ...(result.error ? { error: result.error } : {}),
    },
    "webhook batch attempt",
  );
}
