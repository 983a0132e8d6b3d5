import { Context } from "@temporalio/activity";
import type { PrismaClient } from "../common/db/database.js";
import type { Logger } from "../common/logger.js";
import { recordAttempt as recordAttemptMetric } from "../workers/metrics.js";
import type { AttemptSummary, ClaimOutcome, DeliveryInput, SendAttemptInput } from "../workflows/types.js";
import {
  claimForRetry,
  failPending,
  findAttempt,
  firstAttemptAt,
  recordAttempt,
  summarize,
} from "./attempts-store.js";
import { decide } from "./delivery-policy.js";
import { sendWebhook } from "./http-send.js";
import type { RateLimitGate } from "./rate-limit-gate.js";
import { activeSecrets } from "./secrets.js";

export interface DeliveryDeps {
  prisma: PrismaClient;
  logger: Logger;
  sendTimeoutMs: number;
  rateLimit?: RateLimitGate | undefined;
}

export type SendOutcome = { attempt: AttemptSummary } | { skipped: string };

/** Activities of the delivery workflow; each is one side effect, mirrored into `attempts`. */
export function createDeliveryActivities({ prisma, logger, sendTimeoutMs, rateLimit }: DeliveryDeps) {
  return {
    /** Milliseconds to wait before the next send of this config's delivery (0: go). */
    async rateLimitWait(configId: string): Promise<number> {
      if (!rateLimit) {
        logger.warn({ configId }, "delivery asks for rate limiting but this worker has no --ratelimit-addr");
        return 0;
      }
      const config = await prisma.config.findUnique({ where: { id: configId }, select: { endpoint: true } });
      if (!config) return 0; // the send itself records why the delivery ends
      return rateLimit.waitBeforeSend(configId, new URL(config.endpoint).host);
    },

    /**
     * POSTs the event once and inserts its attempt row. A retry of this activity
     * after the row was written returns that row instead of sending again.
     */
    async sendAttempt(input: SendAttemptInput): Promise<SendOutcome> {
      // Only a retried execution can find its row already written; a local activity
      // re-run by another worker after a crash starts again at attempt 1, so it looks too.
      const { attempt, isLocal } = Context.current().info;
      if (attempt > 1 || isLocal) {
        const done = await findAttempt(prisma, input.webhookId, input.retryAttempt);
        if (done) return { attempt: summarize(done) };
      }
      const config = await prisma.config.findUnique({ where: { id: input.configId } });
      if (!config?.active) {
        const reason = config ? "config deactivated" : "config deleted";
        await failPending(prisma, input.webhookId, reason);
        return { skipped: reason };
      }
      const body = JSON.stringify(input.event);
      // Local activities (--send-mode local) cannot heartbeat; their workflow task keeps them alive.
      const ctx = Context.current();
      const heartbeat = setInterval(() => ctx.info.isLocal || ctx.heartbeat(), 5000);
      const result = await sendWebhook({
        endpoint: config.endpoint,
        webhookId: input.webhookId,
        body,
        secrets: activeSecrets(config, new Date()),
        idempotencyKey: input.event.idempotency_key,
        test: false,
        timeoutMs: sendTimeoutMs,
      }).finally(() => clearInterval(heartbeat));
      const now = new Date();
      const first = input.retryAttempt === 0 ? now : ((await firstAttemptAt(prisma, input.webhookId)) ?? now);
      const decision = decide({
        statusCode: result.statusCode,
        retryAttempt: input.retryAttempt,
        policy: input.policy,
        firstAttemptAt: first,
        now,
        retryAfterMs: result.retryAfterMs,
      });
      const row = await recordAttempt(prisma, {
        webhookId: input.webhookId,
        config,
        payload: body,
        statusCode: result.statusCode,
        retryAttempt: input.retryAttempt,
        status: decision.status,
        nextRetryAfter: decision.nextRetryAfter,
        error: [result.error, decision.reason].filter(Boolean).join("; ") || null,
        replayOf: input.replayOf,
      });
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
    },

    /**
     * Before a re-send: claims the queued row (`retrying`) and checks that the
     * config is still active and the caps allow another try; otherwise the
     * delivery's rows become `failed` and nothing is sent.
     */
    async claimRetry(input: DeliveryInput & { retryAttempt: number }): Promise<ClaimOutcome> {
      const _claimed = await claimForRetry(prisma, input.webhookId);
      const config = await prisma.config.findUnique({ where: { id: input.configId } });
      const first = await firstAttemptAt(prisma, input.webhookId);
      let reason: string | undefined;
      if (!config) reason = "config deleted";
      else if (!config.active) reason = "config deactivated";
      else if (input.retryAttempt >= input.policy.maxAttempts)
        reason = `max attempts (${input.policy.maxAttempts}) reached`;
      else if (first && Date.now() - first.getTime() > input.policy.abortAfterMs)
        reason = "abort-after window exhausted";
      if (reason === undefined) return { proceed: true };
      await failPending(prisma, input.webhookId, reason);
      return { proceed: false, reason };
    },
  };
}

export type DeliveryActivities = ReturnType<typeof createDeliveryActivities>;
