import { randomUUID } from "node:crypto";
import { ApplicationFailure, Context } from "@temporalio/activity";
import { type EndpointAuth, openStoredAuth, type StoredAuth } from "../core/endpoint-auth-rows.js";
import {
  observeDeliveryEnd,
  recordAttempt as recordAttemptMetric,
  sendsClaimedElsewhere,
} from "../core/metrics.js";
import { SealedValueError } from "../core/sealing.js";
import { type EventRef, readStoredEvent, type StoredEvent, storeEvent } from "../core/stored-events.js";
import type { Config } from "../generated/prisma/client.js";
import { failPending, findAttempt, firstAttemptAt, recordAttempt, summarize } from "./attempts-store.js";
import type { DeliveryDeps } from "./delivery-deps.js";
import { decide } from "./delivery-policy.js";
import type { SendAttemptInput, SendOutcome } from "./delivery-types.js";
import { sendWithEndpointAuth } from "./endpoint-auth-send.js";
import type { SendResult } from "./http-send.js";
import { activeSecrets } from "./secrets.js";
import { CLAIM_LEASE_MS, claimBeforeSend, releaseClaim, renewClaim, type SendClaim } from "./send-claims.js";
import { permission, waitForPermission } from "./send-permission.js";
import { deliveryWorkflowId, endUnsendable } from "./unsendable.js";
import { closeUnsent } from "./unsent-deliveries.js";
import { writeAfterPost } from "./write-after-post.js";

// One send of a delivery, step by step: claim the attempt, check the config, take the rate
// limit's permission, read the stored event, POST it, and write the attempt row.

/** Well inside the send activity's heartbeat timeout (20 s, workflows/delivery.ts) and the claim's lease. */
export const HEARTBEAT_EVERY_MS = 4000;
/** A backed-off execution comes back this long after the other's claim would lapse. */
const CLAIM_RETRY_MARGIN_MS = 500;

/** Whether the POST left (the claim is then kept), and who to tell as it leaves. */
interface Progress {
  posted: boolean;
  onPosting?: (() => void) | undefined;
}

/**
 * POSTs attempt `retryAttempt` once and inserts its row. Before the POST, one statement
 * reads the config, looks for the row (a retried or re-run execution of this send finds
 * it and returns it) and takes the attempt's send claim; a claim held by another live
 * execution means that one is sending: this one backs off (a retryable failure) and
 * finds its row next time. With rate limiting, permission and POST happen here
 * together; without permission nothing is sent, the claim is given back and the claimed
 * row is queued again until then.
 */
export async function sendAttemptOnce(
  deps: DeliveryDeps,
  input: SendAttemptInput,
  onPosting?: () => void,
): Promise<SendOutcome> {
  const { pool } = deps;
  const { workflowExecution, activityId, attempt: activityAttempt } = Context.current().info;
  const claim: SendClaim = {
    webhookId: input.webhookId,
    retryAttempt: input.retryAttempt,
    owner: `${workflowExecution?.runId ?? "-"}/${activityId}/${activityAttempt}/${randomUUID()}`,
    leaseMs: CLAIM_LEASE_MS,
  };
  const { config, attemptWritten, claimed, heldUntil, auth } = await claimBeforeSend(
    pool,
    input.configId,
    claim,
  );
  if (attemptWritten || !claimed) return rowOrBackOff(deps, input, heldUntil);
  // Renewed while this execution works, its writes after the POST included (however long
  // they are tried again), so the claim outlives any send that is alive.
  const renewal = setInterval(() => void renewClaim(pool, claim).catch(() => undefined), HEARTBEAT_EVERY_MS);
  const progress: Progress = { posted: false, onPosting };
  try {
    return await sendClaimed(deps, input, claim, config, auth, progress);
  } catch (err) {
    // Failed before its POST: the claim goes back at once, so Temporal's retry of this
    // send does not wait for it to lapse.
    if (!progress.posted) await releaseClaim(pool, claim).catch(() => undefined);
    throw err;
  } finally {
    clearInterval(renewal);
  }
}

/** The attempt is written, or another execution holds its claim: its row, else back off. */
async function rowOrBackOff(
  { prisma }: DeliveryDeps,
  input: SendAttemptInput,
  heldUntil: Date | null | undefined,
): Promise<SendOutcome> {
  const done = await findAttempt(prisma, input.webhookId, input.retryAttempt);
  if (done) return { attempt: summarize(done) };
  sendsClaimedElsewhere.inc();
  // Tried again when the claim would lapse (sooner if Temporal's backoff says so): the
  // other execution has written its row by then, or died and the claim is free.
  const lapsesIn = heldUntil ? heldUntil.getTime() - Date.now() + CLAIM_RETRY_MARGIN_MS : 1000;
  throw ApplicationFailure.create({
    message: `attempt ${input.retryAttempt} of webhook ${input.webhookId} is being sent by another execution`,
    type: "SendClaimed",
    nextRetryDelay: Math.max(1000, Math.min(lapsesIn, CLAIM_LEASE_MS + CLAIM_RETRY_MARGIN_MS)),
  });
}

/** The send once its claim is taken: the config check, permission, POST and row. */
async function sendClaimed(
  deps: DeliveryDeps,
  input: SendAttemptInput,
  claim: SendClaim,
  config: Config | null,
  auth: StoredAuth | null,
  progress: Progress,
): Promise<SendOutcome> {
  const { pool, logger } = deps;
  if (!config?.active) return skipInactive(deps, input, claim, config);
  const ref = await eventRefOf(deps, input);
  if (input.rateLimited && URL.canParse(config.endpoint)) {
    const waitMs = await permission(deps, config);
    if (waitMs > 0) {
      await releaseClaim(pool, claim);
      return waitForPermission(deps, input, config, ref.id, waitMs);
    }
  }
  // Read once permission is taken: a send that waits never loads the bytes.
  const event = await readStoredEvent(pool, ref.id);
  if (!event) {
    const reason = `event ${ref.id} is no longer stored (retention removed it)`;
    await endUnsendable(deps, input, config, reason, null);
    await releaseClaim(pool, claim);
    return { skipped: reason };
  }
  const result = await postIfUsable(deps, config, auth, input, event, progress);
  const now = new Date();
  // The POST is made: a failed write must not fail the activity, whose retry would POST again.
  const { row, decision } = await writeAfterPost(
    () => record(deps, input, config, ref.id, result, now),
    logger,
    { webhookId: input.webhookId, retryAttempt: input.retryAttempt },
  );
  recordAttemptMetric(decision.status, result.statusCode, result.durationMs);
  observeDeliveryEnd(config.tenantId, decision.status, now, [input]);
  logAttempt(deps, input, config, result, decision.status);
  return { attempt: summarize(row) };
}

/** The config was deactivated or deleted: the delivery ends, nothing is sent. */
async function skipInactive(
  { prisma, pool }: DeliveryDeps,
  input: SendAttemptInput,
  claim: SendClaim,
  config: Config | null,
): Promise<SendOutcome> {
  const reason = config ? "config deactivated" : "config deleted";
  await failPending(prisma, input.webhookId, reason);
  await closeUnsent(pool, input.webhookId, reason);
  await releaseClaim(pool, claim);
  return { skipped: reason };
}

/**
 * The delivery's stored event. A delivery started before events were stored by
 * reference carries the event itself: it is stored here, once per send (idempotent).
 */
async function eventRefOf({ pool }: DeliveryDeps, input: SendAttemptInput): Promise<EventRef> {
  if (input.eventRef) return input.eventRef;
  if (input.event) return (await storeEvent(pool, input.event)).ref;
  throw ApplicationFailure.nonRetryable(`webhook ${input.webhookId}: the delivery names no event`);
}

/**
 * The POST, when the endpoint can take one. A row written by SQL or an older version can
 * hold an endpoint no URL parser takes, and the egress policy may deny where it leads:
 * neither can succeed on a retry.
 */
async function postIfUsable(
  deps: DeliveryDeps,
  config: Config,
  auth: StoredAuth | null,
  input: SendAttemptInput,
  event: StoredEvent,
  progress: Progress,
): Promise<SendResult> {
  const usable = URL.canParse(config.endpoint);
  progress.posted = usable;
  if (usable) progress.onPosting?.();
  return usable
    ? await post(deps, config, auth, input, event)
    : {
        statusCode: 0,
        error: `endpoint ${JSON.stringify(config.endpoint)} is not a URL`,
        responseExcerpt: "",
        durationMs: 0,
      };
}

/** Signs the event with the config's secrets and POSTs it with the endpoint's auth. */
async function post(
  { secrets, onPost, sendTimeoutMs, egress, oauthTokens }: DeliveryDeps,
  config: Config,
  stored: StoredAuth | null,
  input: SendAttemptInput,
  event: StoredEvent,
): Promise<SendResult> {
  let signing: string[];
  let auth: EndpointAuth | null;
  try {
    signing = activeSecrets(secrets.openConfig(config), new Date());
    // Read with the config at each send, like the secret: a credential changed through the API applies to the next send.
    auth = stored ? openStoredAuth(secrets, config.id, stored) : null;
  } catch (err) {
    // Never a POST with a wrong signature: an attempt that says which key is missing,
    // retried under the policy, so restoring the key lets the delivery go on.
    if (!(err instanceof SealedValueError)) throw err;
    return {
      statusCode: 0,
      error: `not sent: ${err.message}`,
      responseExcerpt: "",
      durationMs: 0,
    };
  }
  const workflowId = Context.current().info.workflowExecution?.workflowId;
  if (workflowId) onPost?.(workflowId);
  return sendWithEndpointAuth(
    {
      endpoint: config.endpoint,
      webhookId: input.webhookId,
      body: event.body,
      secrets: signing,
      idempotencyKey: event.idempotencyKey,
      test: false,
      timeoutMs: input.policy.sendTimeoutMs ?? sendTimeoutMs,
      egress,
    },
    auth,
    config.id,
    oauthTokens,
  );
}

/** The send's outcome under the retry policy, written as its attempt row (idempotent). */
async function record(
  { prisma, pool }: DeliveryDeps,
  input: SendAttemptInput,
  config: Config,
  eventId: string,
  result: SendResult,
  now: Date,
) {
  const usable = URL.canParse(config.endpoint);
  const first = input.retryAttempt === 0 ? now : ((await firstAttemptAt(prisma, input.webhookId)) ?? now);
  const decision =
    usable && !result.permanent
      ? decide({
          statusCode: result.statusCode,
          retryAttempt: input.retryAttempt,
          policy: input.policy,
          firstAttemptAt: first,
          now,
          retryAfterMs: result.retryAfterMs,
        })
      : { status: "failed" as const, nextRetryAfter: null };
  const row = await recordAttempt(
    { prisma, pool },
    {
      webhookId: input.webhookId,
      config,
      eventId,
      statusCode: result.statusCode,
      ...(usable && !result.permanent ? { durationMs: result.durationMs } : {}),
      retryAttempt: input.retryAttempt,
      status: decision.status,
      nextRetryAfter: decision.nextRetryAfter,
      error: [result.error, decision.reason].filter(Boolean).join("; ") || null,
      replayOf: input.replayOf,
      workflowId: deliveryWorkflowId(input),
    },
  );
  return { row, decision };
}

function logAttempt(
  { logger }: DeliveryDeps,
  input: SendAttemptInput,
  config: Config,
  result: SendResult,
  status: string,
): void {
  logger.info(
    {
      webhookId: input.webhookId,
      configId: config.id,
      retryAttempt: input.retryAttempt,
      statusCode: result.statusCode,
      status,
      ms: result.durationMs,
      ...(result.error ? { error: result.error } : {}),
      ...(result.statusCode >= 300 && result.responseExcerpt
        ? { response: result.responseExcerpt.slice(0, 512) }
        : {}),
    },
    "webhook attempt",
  );
}
