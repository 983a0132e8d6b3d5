import { randomUUID } from "node:crypto";
import { ApplicationFailure, Context } from "@temporalio/activity";
import type pg from "pg";
import type { PrismaClient } from "../common/db/database.js";
import type { Logger } from "../common/logger.js";
import { findConfig } from "../core/config-rows.js";
import type { ConfigSecrets } from "../core/config-secrets.js";
import type { EgressPolicy } from "../core/egress-policy.js";
import { type EndpointAuth, openStoredAuth, type StoredAuth } from "../core/endpoint-auth-rows.js";
import { firstSends, recordAttempt as recordAttemptMetric, sendsClaimedElsewhere } from "../core/metrics.js";
import { SealedValueError } from "../core/sealing.js";
import { type EventRef, readStoredEvent, type StoredEvent, storeEvent } from "../core/stored-events.js";
import type { Config } from "../generated/prisma/client.js";
import {
  claimForRetry,
  closedReason,
  failPending,
  findAttempt,
  firstAttemptAt,
  recordAttempt,
  requeueClaimed,
  summarize,
} from "./attempts-store.js";
import { decide, whyNoFurtherTry } from "./delivery-policy.js";
import type {
  ClaimInput,
  ClaimOutcome,
  CloseInput,
  LocalFirstInput,
  LocalFirstOutcome,
  SendAttemptInput,
  SendOutcome,
} from "./delivery-types.js";
import { sendWithEndpointAuth } from "./endpoint-auth-send.js";
import type { SendResult } from "./http-send.js";
import type { LocalFirstSends } from "./local-first.js";
import type { OAuthTokens } from "./oauth-tokens.js";
import type { RateLimitGate } from "./rate-limit-gate.js";
import { activeSecrets } from "./secrets.js";
import { CLAIM_LEASE_MS, claimBeforeSend, releaseClaim, renewClaim, type SendClaim } from "./send-claims.js";
import { closeUnsent, recordUnsentWait } from "./unsent-deliveries.js";
import { writeAfterPost, writeDeadline } from "./write-after-post.js";

/** Well inside the send activity's heartbeat timeout (20 s, workflows/delivery.ts) and the claim's lease. */
const HEARTBEAT_EVERY_MS = 4000;
/** A backed-off execution comes back this long after the other's claim would lapse. */
const CLAIM_RETRY_MARGIN_MS = 500;

/** The workflow id a send's rows name: the delivery's own, also when another workflow sends for it. */
const deliveryWorkflowId = (input: SendAttemptInput): string | undefined =>
  input.deliveryWorkflowId ?? Context.current().info.workflowExecution?.workflowId;

export interface DeliveryDeps {
  prisma: PrismaClient;
  /** Prisma's pool, for the queries every delivery makes (core/config-rows.ts says why). */
  pool: pg.Pool;
  logger: Logger;
  sendTimeoutMs: number;
  rateLimit?: RateLimitGate | undefined;
  egress: EgressPolicy;
  /** Opens the config's secrets, read from the database at each send. */
  secrets: ConfigSecrets;
  /** OAuth tokens of the endpoints that want one, shared by the process's sends. */
  oauthTokens: OAuthTokens;
  /** Told as a delivery's POST leaves (workers/deliveries-in-flight.ts: a slow receiver stops counting). */
  onPost?: (workflowId: string) => void;
  /** Local first sends of this worker (--send-mode local-first): cool-downs and detached POSTs. */
  localFirst?: LocalFirstSends;
  /** Tells a delivery's workflow that its detached first send has written its row. */
  firstSendSettled?: (workflowId: string) => Promise<void>;
}

/** Activities of the delivery workflow; each is one side effect, mirrored into `attempts`. */
export function createDeliveryActivities({
  prisma,
  pool,
  logger,
  sendTimeoutMs,
  rateLimit,
  egress,
  secrets,
  oauthTokens,
  onPost,
  localFirst,
  firstSendSettled,
}: DeliveryDeps) {
  /** 0 when a send of this config to `endpoint` may go now (permission taken), else the wait. */
  const permission = (configId: string, endpoint: string): Promise<number> => {
    if (!rateLimit) {
      logger.warn({ configId }, "delivery asks for rate limiting but this worker has no --ratelimit-addr");
      return Promise.resolve(0);
    }
    return rateLimit.acquire(configId, new URL(endpoint).host);
  };

  const post = async (
    config: Config,
    stored: StoredAuth | null,
    input: SendAttemptInput,
    event: StoredEvent,
  ): Promise<SendResult> => {
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
  };

  /**
   * Heartbeats every few seconds for as long as `task` runs, whatever step it is in: a send
   * that waits for a database connection or the rate limit service is as alive as one
   * waiting for its POST, and Temporal must not start a second execution of it meanwhile.
   * Local activities (--send-mode local) cannot heartbeat; their workflow task keeps them.
   */
  const heartbeating = async <T>(task: () => Promise<T>): Promise<T> => {
    const ctx = Context.current();
    if (ctx.info.isLocal) return task();
    const beat = setInterval(() => ctx.heartbeat(), HEARTBEAT_EVERY_MS);
    try {
      return await task();
    } finally {
      clearInterval(beat);
    }
  };

  /** The send's outcome under the retry policy, written as its attempt row (idempotent). */
  const record = async (
    input: SendAttemptInput,
    config: Config,
    eventId: string,
    result: SendResult,
    now: Date,
  ) => {
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
  };

  /**
   * The rate limit service said wait. A wait that would end past the abort-after deadline
   * (counted from the first attempt, or from acceptance when none was sent yet) closes the
   * delivery now with the reason. Otherwise the delivery is queued until then: a retry's
   * claimed row goes back to `to retry`; a first send that has no row yet gets its unsent
   * row (unsent-deliveries.ts), so it is visible, cancellable and repairable while it waits.
   */
  const waitForPermission = async (
    input: SendAttemptInput,
    config: Config,
    eventId: string,
    waitMs: number,
  ): Promise<SendOutcome> => {
    const now = Date.now();
    const accepted = input.acceptedAt ? Date.parse(input.acceptedAt) : now;
    const first = (await firstAttemptAt(prisma, input.webhookId))?.getTime() ?? accepted;
    if (now + waitMs > Math.min(first, accepted) + input.policy.abortAfterMs) {
      const reason = `abort-after window exhausted while waiting for the rate limit service${
        input.retryAttempt === 0 ? " (never sent)" : ""
      }`;
      await endUnsendable(input, config, reason, eventId);
      return { skipped: reason };
    }
    if (input.retryAttempt > 0)
      await requeueClaimed(prisma, input.webhookId, input.retryAttempt, new Date(now + waitMs));
    else
      await recordUnsentWait(
        pool,
        unsentWait(input, config, eventId, "waiting for the rate limit service", now + waitMs),
      );
    return { waitMs };
  };

  const unsentWait = (
    input: SendAttemptInput,
    config: Config,
    eventId: string | null,
    reason: string,
    at: number,
  ) => ({
    webhookId: input.webhookId,
    configId: config.id,
    workflowId: deliveryWorkflowId(input) ?? "",
    eventId,
    replayOf: input.replayOf,
    acceptedAt: new Date(input.acceptedAt ?? Date.now()),
    reason,
    nextTryAt: new Date(at),
  });

  /**
   * The delivery's stored event. A delivery started before events were stored by
   * reference carries the event itself: it is stored here, once per send (idempotent).
   */
  const eventRefOf = async (input: SendAttemptInput): Promise<EventRef> => {
    if (input.eventRef) return input.eventRef;
    if (input.event) return (await storeEvent(pool, input.event)).ref;
    throw ApplicationFailure.nonRetryable(`webhook ${input.webhookId}: the delivery names no event`);
  };

  /**
   * Ends a delivery that can never send, with a row that says why: a first send has none
   * yet, so it gets a closed unsent row (naming its stored event, when that still exists).
   */
  const endUnsendable = async (
    input: SendAttemptInput,
    config: Config,
    reason: string,
    eventId: string | null,
  ) => {
    if (input.retryAttempt > 0) await failPending(prisma, input.webhookId, reason);
    else {
      await recordUnsentWait(pool, unsentWait(input, config, eventId, reason, Date.now()));
      await closeUnsent(pool, input.webhookId, reason);
    }
  };

  /**
   * POSTs attempt `retryAttempt` once and inserts its row. Before the POST, one statement
   * reads the config, looks for the row (a retried or re-run execution of this send finds
   * it and returns it) and takes the attempt's send claim; a claim held by another live
   * execution means that one is sending: this one backs off (a retryable failure) and
   * finds its row next time. With rate limiting, permission and POST happen here
   * together; without permission nothing is sent, the claim is given back and the claimed
   * row is queued again until then.
   */
  const send = async (input: SendAttemptInput, onPosting?: () => void): Promise<SendOutcome> => {
    const { workflowExecution, activityId, attempt: activityAttempt } = Context.current().info;
    const deadline = writeDeadline();
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
    if (attemptWritten || !claimed) {
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
    // Renewed while this execution works, so the claim outlives any send that is alive.
    const renewal = setInterval(
      () => void renewClaim(pool, claim).catch(() => undefined),
      HEARTBEAT_EVERY_MS,
    );
    const progress = { posted: false, onPosting };
    try {
      return await sendClaimed(input, claim, config, auth, deadline, progress);
    } catch (err) {
      // Failed before its POST: the claim goes back at once, so Temporal's retry of this
      // send does not wait for it to lapse.
      if (!progress.posted) await releaseClaim(pool, claim).catch(() => undefined);
      throw err;
    } finally {
      clearInterval(renewal);
    }
  };

  /** The send once its claim is taken: the config check, permission, POST and row. */
  const sendClaimed = async (
    input: SendAttemptInput,
    claim: SendClaim,
    config: Config | null,
    auth: StoredAuth | null,
    deadline: number,
    progress: { posted: boolean; onPosting?: (() => void) | undefined },
  ): Promise<SendOutcome> => {
    if (!config?.active) {
      const reason = config ? "config deactivated" : "config deleted";
      await failPending(prisma, input.webhookId, reason);
      await closeUnsent(pool, input.webhookId, reason);
      await releaseClaim(pool, claim);
      return { skipped: reason };
    }
    const ref = await eventRefOf(input);
    if (input.rateLimited && URL.canParse(config.endpoint)) {
      const waitMs = await permission(config.id, config.endpoint);
      if (waitMs > 0) {
        await releaseClaim(pool, claim);
        return waitForPermission(input, config, ref.id, waitMs);
      }
    }
    // Read once permission is taken: a send that waits never loads the bytes.
    const event = await readStoredEvent(pool, ref.id);
    if (!event) {
      const reason = `event ${ref.id} is no longer stored (retention removed it)`;
      await endUnsendable(input, config, reason, null);
      await releaseClaim(pool, claim);
      return { skipped: reason };
    }
    // A row written by SQL or an older version can hold an endpoint no URL parser takes,
    // and the egress policy may deny where it leads: neither can succeed on a retry.
    const usable = URL.canParse(config.endpoint);
    progress.posted = usable;
    if (usable) progress.onPosting?.();
    const result: SendResult = usable
      ? await post(config, auth, input, event)
      : {
          statusCode: 0,
          error: `endpoint ${JSON.stringify(config.endpoint)} is not a URL`,
          responseExcerpt: "",
          durationMs: 0,
        };
    const now = new Date();
    // The POST is made: a failed write must not fail the activity, whose retry would POST again.
    const { row, decision } = await writeAfterPost(
      () => record(input, config, ref.id, result, now),
      deadline,
      logger,
      { webhookId: input.webhookId, retryAttempt: input.retryAttempt },
    );
    recordAttemptMetric(decision.status, result.statusCode, result.durationMs);
    logger.info(
      {
        webhookId: input.webhookId,
        configId: config.id,
        retryAttempt: input.retryAttempt,
        statusCode: result.statusCode,
        status: decision.status,
        ms: result.durationMs,
        ...(result.error ? { error: result.error } : {}),
        ...(result.statusCode >= 300 && result.responseExcerpt
          ? { response: result.responseExcerpt.slice(0, 512) }
          : {}),
      },
      "webhook attempt",
    );
    return { attempt: summarize(row) };
  };

  return {
    /**
     * Workflows started before the send took permission itself (v1) ask here,
     * then send without asking: 0 means permission was taken.
     */
    async rateLimitWait(configId: string): Promise<number> {
      const config = await findConfig(pool, configId);
      if (!config || !URL.canParse(config.endpoint)) return 0; // the send records why the delivery ends
      return permission(configId, config.endpoint);
    },

    /**
     * POSTs the event once and inserts its attempt row. A retry of this activity
     * after the row was written returns that row instead of sending again. With
     * rate limiting, permission and POST happen here together; without
     * permission nothing is sent and the claimed row is queued again until then.
     */
    sendAttempt: (input: SendAttemptInput): Promise<SendOutcome> => heartbeating(() => send(input)),

    /**
     * The first send as a local activity (--send-mode local-first): the send above, given
     * `budgetMs` to answer. Past it, the POST goes on detached, the workflow is told to
     * hand over to the sends queue (whose send finds this one's row, or its claim), and
     * the config cools down; a send that failed cools it down too. A config cooling down,
     * or a worker with too many detached POSTs, hands over at once without sending.
     */
    async sendFirstLocally(input: LocalFirstInput): Promise<LocalFirstOutcome> {
      const sends = localFirst;
      const skip = sends ? sends.skipReason(input.configId) : "this worker takes no local first sends";
      if (!sends || skip) {
        firstSends.inc({ outcome: "skipped" });
        return { handedOver: skip ?? "", detached: false };
      }
      const workflowId = Context.current().info.workflowExecution?.workflowId ?? "";
      // The budget is the receiver's: it runs from the moment the POST leaves.
      let timer: NodeJS.Timeout | undefined;
      let posting = () => {};
      const overBudget = new Promise<undefined>((r) => {
        posting = () => {
          timer = setTimeout(() => r(undefined), input.budgetMs);
        };
      });
      const sending = send(input, () => posting());
      const outcome = await Promise.race([sending, overBudget]).finally(() => clearTimeout(timer));
      if (outcome) {
        firstSends.inc({ outcome: "local" });
        if ("attempt" in outcome && outcome.attempt.status !== "success")
          sends.coolDown(
            input.configId,
            `a first send got ${outcome.attempt.statusCode || outcome.attempt.error}`,
          );
        return outcome;
      }
      firstSends.inc({ outcome: "over_budget" });
      const why = `no answer within ${input.budgetMs} ms`;
      sends.coolDown(input.configId, `a first send had ${why}`);
      sends.detach(
        sending
          .catch((err: unknown) =>
            logger.warn({ webhookId: input.webhookId, err: String(err) }, "detached first send failed"),
          )
          .finally(() =>
            firstSendSettled?.(workflowId).catch((err: unknown) =>
              logger.debug(
                { workflowId, err: String(err) },
                "could not tell the workflow its first send ended",
              ),
            ),
          ),
      );
      return { handedOver: why, detached: true };
    },

    /**
     * Before a re-send: claims the queued row (`retrying`) and checks that the
     * config is still active and the caps allow another try; otherwise the
     * delivery's rows become `failed` and nothing is sent.
     */
    async claimRetry(input: ClaimInput): Promise<ClaimOutcome> {
      // Nothing left to claim: the row was closed meanwhile (reconciliation, SQL). Its
      // reason stands, even if the config was reactivated since.
      const claimed = await claimForRetry(prisma, input.webhookId, input.retryAttempt);
      if (!claimed) return { proceed: false, reason: await closedReason(prisma, input.webhookId) };
      // The caps apply when the retry was due, not when the timer's task got to run: a
      // retry scheduled at the abort-after deadline itself is sent, never refused late.
      const now = Date.now();
      const reason = whyNoFurtherTry({
        config: await findConfig(pool, input.configId),
        retryAttempt: input.retryAttempt,
        policy: input.policy,
        firstAttemptAt: await firstAttemptAt(prisma, input.webhookId),
        now: claimed.dueAt ? Math.min(now, claimed.dueAt.getTime()) : now,
      });
      if (reason === undefined) return { proceed: true };
      await failPending(prisma, input.webhookId, reason);
      return { proceed: false, reason };
    },

    /** Ends the delivery without a send: its queued or claimed row becomes `failed` with the reason. */
    async closeDelivery({ webhookId, reason }: CloseInput): Promise<number> {
      const closed =
        (await failPending(prisma, webhookId, reason)) + (await closeUnsent(pool, webhookId, reason));
      logger.info({ webhookId, reason, closed }, "delivery closed");
      return closed;
    },
  };
}

export type DeliveryActivities = ReturnType<typeof createDeliveryActivities>;
