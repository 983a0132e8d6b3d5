import { randomUUID } from "node:crypto";
import { ApplicationFailure, Context } from "@temporalio/activity";
import type { StoredAuth } from "../core/endpoint-auth-rows.js";
import {
  observeDeliveryEnd,
  recordAttempt as recordAttemptMetric,
  sendsClaimedElsewhere,
  sendsWaitingForSlot,
} from "../core/metrics.js";
import { readStoredEvents, type StoredEvent } from "../core/stored-events.js";
import type { Attempt, Config } from "../generated/prisma/client.js";
import { exchangeOf } from "./attempt-exchange.js";
import {
  type AttemptOf,
  findAttempt,
  firstAttemptAt,
  fromDbStatus,
  recordAttempts,
} from "./attempts-store.js";
import { closeDeliveries } from "./close-deliveries.js";
import type { SendDeps } from "./delivery-deps.js";
import { decide } from "./delivery-policy.js";
import type { AttemptStatus, DeliveryPolicy } from "./delivery-types.js";
import type { SendResult } from "./http-send.js";
import { CLAIM_LEASE_MS, claimBeforeSend, releaseClaim, renewClaim, type SendClaim } from "./send-claims.js";
import { permission } from "./send-permission.js";
import { type PostOf, postSigned } from "./send-post.js";
import { SLOT_WAIT_MS, takeSendSlot } from "./send-slots.js";
import { writeAfterPost } from "./write-after-post.js";

// The one send of the product: a delivery's attempt (send-attempt.ts, also a local first
// send and an ordered key's head) and a batch's (batch-send.ts) go through the same steps
// with the same safety nets: claim the attempt and renew the claim, check the config, take
// the rate limit's permission, read the stored events, sign and POST, decide under the
// retry policy, and write every row in one statement, tried again after the POST.

/** Every few seconds: well inside the send activity's heartbeat timeout (20 s, workflows/delivery.ts) and the claim's lease. */
export const HEARTBEAT_EVERY_MS = 4000;
/** A backed-off execution comes back this long after the other's claim would lapse. */
const CLAIM_RETRY_MARGIN_MS = 500;

/** One delivery in a send: its webhook, its stored event, the delivery it replays, when it was accepted (ISO). */
export type SendMember = AttemptOf & { acceptedAt?: string | undefined };

/** One send: attempt `retryAttempt` of one delivery, or of a batch's events. */
export interface SendJob {
  configId: string;
  retryAttempt: number;
  policy: DeliveryPolicy;
  /** Ask the rate limit service first: one hit per POST, whatever its events. */
  rateLimited?: boolean | undefined;
  /** The deliveries sent, in acceptance order. The first one's attempt is the send's claim. */
  members: readonly SendMember[];
  /** A batch's id: the members' events are POSTed as one JSON array under it. */
  batchId?: string | undefined;
  /** The workflow the rows name. */
  workflowId?: string | undefined;
  /** Told as the POST leaves (a local first send's budget starts then). */
  onPosting?: (() => void) | undefined;
}

/** The part of a send a delivery's and a batch's input say alike. */
export const jobOf = ({
  configId,
  retryAttempt,
  policy,
  rateLimited,
}: Pick<SendJob, "configId" | "retryAttempt" | "policy" | "rateLimited">) => ({
  configId,
  retryAttempt,
  policy,
  rateLimited,
});

/** What differs between the send of a delivery and of a batch. */
export interface SendSteps {
  /** The rate limit service said wait, or the config's send slots are taken (`why`); the claim is given back already. */
  wait(config: Config, waitMs: number, why: string): Promise<SendEnd>;
  /** A member's event is no longer stored (retention removed it): its delivery ends. */
  endMember(member: SendMember, config: Config, reason: string): Promise<void>;
}

/** The attempt's outcome, the same for every member of the send. */
export interface Sent {
  status: AttemptStatus;
  statusCode: number;
  nextRetryAfter: string | null;
  error: string | null;
  /** The row of the claim's delivery (the first member), when it was sent. */
  row?: Attempt | undefined;
}

/** What one send did: an attempt, nothing (the deliveries end), or wait for the rate limit. */
export type SendEnd = { sent: Sent } | { skipped: string } | { waitMs: number };

/**
 * Runs a send activity, heartbeating every few seconds for as long as it runs, whatever
 * step it is in: a send that waits for a database connection or the rate limit service is
 * as alive as one waiting for its POST, and Temporal must not start a second execution of
 * it meanwhile. Local activities (--send-mode local) cannot heartbeat; their workflow task
 * keeps them.
 */
export async function heartbeating<T>(task: () => Promise<T>): Promise<T> {
  const ctx = Context.current();
  if (ctx.info.isLocal) return task();
  const beat = setInterval(() => ctx.heartbeat(), HEARTBEAT_EVERY_MS);
  try {
    return await task();
  } finally {
    clearInterval(beat);
  }
}

/**
 * POSTs attempt `job.retryAttempt` once and writes its rows. Before the POST, one statement
 * reads the config, looks for the claim's row (a retried or re-run execution finds it and
 * returns it) and takes the claim; a claim held by another live execution means that one is
 * sending: this one backs off (a retryable failure) and finds the row next time. Without
 * the rate limit's permission nothing is sent and the claim is given back.
 */
export async function sendOnce(deps: SendDeps, job: SendJob, steps: SendSteps): Promise<SendEnd> {
  const { pool } = deps;
  const head = job.members[0];
  if (!head) return { skipped: "no event left to send" };
  const { workflowExecution, activityId, attempt: activityAttempt } = Context.current().info;
  const claim: SendClaim = {
    webhookId: head.webhookId,
    retryAttempt: job.retryAttempt,
    owner: `${workflowExecution?.runId ?? "-"}/${activityId}/${activityAttempt}/${randomUUID()}`,
    leaseMs: CLAIM_LEASE_MS,
  };
  const { config, attemptWritten, claimed, heldUntil, auth } = await claimBeforeSend(
    pool,
    job.configId,
    claim,
  );
  if (attemptWritten || !claimed) return rowOrBackOff(deps, job, claim, heldUntil);
  // Renewed while this execution works, its writes after the POST included (however long
  // they are tried again), so the claim outlives any send that is alive.
  const renewal = setInterval(() => void renewClaim(pool, claim).catch(() => undefined), HEARTBEAT_EVERY_MS);
  const progress = { posted: false };
  try {
    return await sendClaimed(deps, job, steps, { claim, config, auth, progress });
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
  { prisma }: SendDeps,
  job: SendJob,
  claim: SendClaim,
  heldUntil: Date | null | undefined,
): Promise<SendEnd> {
  const done = await findAttempt(prisma, claim.webhookId, claim.retryAttempt);
  if (done) return { sent: sentOf(done) };
  sendsClaimedElsewhere.inc();
  // Tried again when the claim would lapse (sooner if Temporal's backoff says so): the
  // other execution has written its row by then, or died and the claim is free.
  const lapsesIn = heldUntil ? heldUntil.getTime() - Date.now() + CLAIM_RETRY_MARGIN_MS : 1000;
  const what = job.batchId ? `batch ${job.batchId}` : `webhook ${claim.webhookId}`;
  throw ApplicationFailure.create({
    message: `attempt ${claim.retryAttempt} of ${what} is being sent by another execution`,
    type: "SendClaimed",
    nextRetryDelay: Math.max(1000, Math.min(lapsesIn, CLAIM_LEASE_MS + CLAIM_RETRY_MARGIN_MS)),
  });
}

const sentOf = (row: Attempt): Sent => ({
  status: fromDbStatus(row.status),
  statusCode: row.statusCode,
  nextRetryAfter: row.nextRetryAfter?.toISOString() ?? null,
  error: row.error,
  row,
});

interface Claimed {
  claim: SendClaim;
  config: Config | null;
  auth: StoredAuth | null;
  /** Whether the POST left: the claim is then kept, whatever happens next. */
  progress: { posted: boolean };
}

/** The send once its claim is taken: the config check, permission, events, POST and rows. */
async function sendClaimed(deps: SendDeps, job: SendJob, steps: SendSteps, c: Claimed): Promise<SendEnd> {
  const { pool, logger } = deps;
  const { claim, config, progress } = c;
  const head = job.members[0]!;
  if (!config?.active) {
    const reason = config ? "config deactivated" : "config deleted";
    await closeDeliveries(
      deps,
      job.members.map((m) => m.webhookId),
      reason,
    );
    await releaseClaim(pool, claim);
    return { skipped: reason };
  }
  const max = config.maxConcurrency;
  if (max !== null && !(await takeSendSlot(pool, config.id, claim, max))) {
    sendsWaitingForSlot.inc();
    // Spread out, so the sends that found the slots taken do not all ask again together.
    const waitMs = SLOT_WAIT_MS + Math.floor(Math.random() * SLOT_WAIT_MS);
    return steps.wait(config, waitMs, `waiting for a send slot (maxConcurrency ${max})`);
  }
  const usable = URL.canParse(config.endpoint);
  if (job.rateLimited && usable) {
    const waitMs = await permission(deps, config);
    if (waitMs > 0) {
      await releaseClaim(pool, claim);
      return steps.wait(config, waitMs, "waiting for the rate limit service");
    }
  }
  // Read once permission is taken: a send that waits never loads the bytes.
  const events = await storedEvents(deps, job, steps, config);
  if (events.length === 0) {
    await releaseClaim(pool, claim);
    return {
      skipped: job.batchId
        ? "no stored event left in the batch"
        : `event ${head.eventId} is no longer stored (retention removed it)`,
    };
  }
  progress.posted = usable;
  if (usable) job.onPosting?.();
  const result = await postSigned(deps, config, c.auth, postOf(job, events), job.policy.sendTimeoutMs);
  const now = new Date();
  // The POST is made: a failed write must not fail the activity, whose retry would POST again.
  const sent = await writeAfterPost(() => writeRows(deps, job, config, events, result, now), logger, {
    webhookId: claim.webhookId,
    retryAttempt: claim.retryAttempt,
    ...(job.batchId ? { batchId: job.batchId } : {}),
  });
  // The claim's own event was gone: no row ends its claim, so it is given back.
  if (!sent.row) await releaseClaim(pool, claim);
  for (const _ of events) recordAttemptMetric(sent.status, result.statusCode, result.durationMs);
  observeDeliveryEnd(config.tenantId, sent.status, now, events);
  logAttempt(deps, job, config, events.length, result, sent.status);
  return { sent };
}

/** A member with the event it sends. */
type Sending = SendMember & { event: StoredEvent };

/** The members whose events are still stored; the others' deliveries end with the reason. */
async function storedEvents(
  deps: SendDeps,
  job: SendJob,
  steps: SendSteps,
  config: Config,
): Promise<Sending[]> {
  const stored = await readStoredEvents(deps.pool, [...new Set(job.members.map((m) => m.eventId))]);
  const sending: Sending[] = [];
  for (const m of job.members) {
    const event = stored.get(m.eventId);
    if (event) sending.push({ ...m, event });
    else await steps.endMember(m, config, `event ${m.eventId} is no longer stored (retention removed it)`);
  }
  return sending;
}

/** A delivery's POST carries its event; a batch's the events' bodies as one array under its id. */
function postOf(job: SendJob, events: readonly Sending[]): PostOf {
  const only = events[0]!;
  return job.batchId
    ? { batchId: job.batchId, events: events.map((e) => ({ webhookId: e.webhookId, body: e.event.body })) }
    : { webhookId: only.webhookId, body: only.event.body, idempotencyKey: only.event.idempotencyKey };
}

/** The POST's outcome under the retry policy, written as every member's row. */
async function writeRows(
  { prisma, pool }: SendDeps,
  job: SendJob,
  config: Config,
  events: readonly Sending[],
  result: SendResult,
  now: Date,
): Promise<Sent> {
  const head = job.members[0]!;
  const first = job.retryAttempt === 0 ? now : ((await firstAttemptAt(prisma, head.webhookId)) ?? now);
  // Not a URL, an egress denial, an unusable credential: no retry can succeed.
  const decision = result.permanent
    ? { status: "failed" as const, nextRetryAfter: null }
    : decide({
        statusCode: result.statusCode,
        retryAttempt: job.retryAttempt,
        policy: job.policy,
        firstAttemptAt: first,
        now,
        retryAfterMs: result.retryAfterMs,
      });
  const error = [result.error, decision.reason].filter(Boolean).join("; ") || null;
  const rows = await recordAttempts(
    pool,
    {
      config,
      statusCode: result.statusCode,
      ...(result.permanent ? {} : { durationMs: result.durationMs }),
      retryAttempt: job.retryAttempt,
      status: decision.status,
      nextRetryAfter: decision.nextRetryAfter,
      error,
      workflowId: job.workflowId,
      batchId: job.batchId,
      exchange: exchangeOf(result),
    },
    events,
  );
  const row = events.some((e) => e.webhookId === head.webhookId)
    ? (rows.find((r) => r.webhookId === head.webhookId) ??
      (await findAttempt(prisma, head.webhookId, job.retryAttempt)) ??
      undefined)
    : undefined;
  return {
    status: decision.status,
    statusCode: result.statusCode,
    nextRetryAfter: decision.nextRetryAfter?.toISOString() ?? null,
    error,
    row,
  };
}

function logAttempt(
  { logger }: SendDeps,
  job: SendJob,
  config: Config,
  events: number,
  result: SendResult,
  status: string,
): void {
  logger.info(
    {
      ...(job.batchId ? { batchId: job.batchId, events } : { webhookId: job.members[0]!.webhookId }),
      configId: config.id,
      retryAttempt: job.retryAttempt,
      statusCode: result.statusCode,
      status,
      ms: result.durationMs,
      ...(result.error ? { error: result.error } : {}),
      ...(result.statusCode >= 300 && result.responseExcerpt
        ? { response: result.responseExcerpt.slice(0, 512) }
        : {}),
    },
    job.batchId ? "webhook batch attempt" : "webhook attempt",
  );
}
