import {
  defineQuery,
  proxyActivities,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  upsertSearchAttributes,
} from "@temporalio/workflow";
import type { DeliveryActivities } from "../activities/delivery-activities.js";
import { WebhookAttemptCount, WebhookDeliveryStatus } from "./search-attributes.js";
import type { AttemptSummary, DeliveryInput, DeliveryResult } from "./types.js";

/** The attempts of this delivery so far, oldest first (for the Web UI and `temporal workflow query`). */
export const attemptsQuery = defineQuery<AttemptSummary[]>("attempts");

// Activity retries are for infrastructure failures only (database down, worker
// lost); the endpoint's answer is always an attempt row, never an exception.
const retry = { initialInterval: "1 second", backoffCoefficient: 2, maximumInterval: "1 minute" } as const;
const activities = (input: DeliveryInput) =>
  input.localSends
    ? // In the workflow worker: no activity task, one workflow task fewer per send.
      proxyLocalActivities<DeliveryActivities>({ startToCloseTimeout: "2 minutes", retry })
    : proxyActivities<DeliveryActivities>({
        taskQueue: input.sendTaskQueue,
        startToCloseTimeout: "2 minutes",
        heartbeatTimeout: "20 seconds",
        retry,
      });

/**
 * Delivers one event to one config: first send, then durable backoff timers
 * and re-sends until success, a permanent failure, the caps, or the config
 * going away. Every transition is mirrored into the attempts table.
 */
export async function deliverWebhook(input: DeliveryInput): Promise<DeliveryResult> {
  const { sendAttempt, claimRetry, rateLimitWait } = activities(input);
  // Waiting for the rate limit service is a durable timer, never an attempt.
  const gate = async () => {
    for (;;) {
      const waitMs = await rateLimitWait(input.configId);
      if (waitMs <= 0) return;
      setCurrentDetails(`waiting ${waitMs} ms for the rate limit service`);
      await sleep(waitMs);
    }
  };
  const attempts: AttemptSummary[] = [];
  setHandler(attemptsQuery, () => attempts);

  const finish = (status: DeliveryResult["status"], reason: string): DeliveryResult => {
    const last = attempts.at(-1);
    upsertSearchAttributes([
      { key: WebhookDeliveryStatus, value: status },
      { key: WebhookAttemptCount, value: attempts.length },
    ]);
    setCurrentDetails(`${status}: ${reason}`);
    return {
      webhookId: input.webhookId,
      status,
      attempts: attempts.length,
      lastStatusCode: last?.statusCode ?? 0,
      reason,
    };
  };

  for (let retryAttempt = 0; ; retryAttempt++) {
    if (retryAttempt > 0) {
      const claim = await claimRetry({ ...input, retryAttempt });
      if (!claim.proceed) return finish("failed", claim.reason);
    }
    if (input.rateLimited) await gate();
    const outcome = await sendAttempt({ ...input, retryAttempt });
    if ("skipped" in outcome) return finish("failed", outcome.skipped);
    const attempt = outcome.attempt;
    attempts.push(attempt);
    if (attempt.status === "success") return finish("success", `HTTP ${attempt.statusCode}`);
    if (attempt.status !== "to retry") {
      return finish("failed", attempt.error ?? `HTTP ${attempt.statusCode}`);
    }
    upsertSearchAttributes([
      { key: WebhookDeliveryStatus, value: "to retry" },
      { key: WebhookAttemptCount, value: attempts.length },
    ]);
    setCurrentDetails(
      `attempt ${retryAttempt + 1} got ${attempt.statusCode || attempt.error}; next try at ${attempt.nextRetryAfter}`,
    );
    await sleep(Math.max(0, Date.parse(attempt.nextRetryAfter!) - Date.now()));
  }
}
