import type { AttemptStatus, DeliveryPolicy } from "./delivery-types.js";

// Pure decisions of the delivery: how an answer is classified and when the
// next try happens. Kept apart from I/O so they are easy to test and reuse.

export type Outcome = "success" | "permanent" | "retryable";

/** 2xx succeeds; 4xx other than 408 and 429 is permanent; anything else (0 = transport error) is retried. */
export function classify(statusCode: number): Outcome {
  if (statusCode >= 200 && statusCode < 300) return "success";
  if (statusCode >= 400 && statusCode < 500 && statusCode !== 408 && statusCode !== 429) return "permanent";
  return "retryable";
}

/** min(min·2^n, max), no jitter; n is the retry attempt that just failed (0 = first send). */
export function backoffDelay(policy: DeliveryPolicy, retryAttempt: number): number {
  return Math.min(policy.minBackoffMs * 2 ** retryAttempt, policy.maxBackoffMs);
}

/** A Retry-After header (seconds or HTTP date) in milliseconds from `now`, or undefined. */
export function parseRetryAfter(value: string | null | undefined, now: number): number | undefined {
  if (!value) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

export interface Decision {
  status: AttemptStatus;
  nextRetryAfter: Date | null;
  /** Why a retryable answer still ends the delivery. */
  reason?: string;
}

/**
 * The status of a fresh attempt row. A retryable answer is scheduled with
 * backoff, or later when the server asked (Retry-After), but never past the
 * abort-after window; when no try fits in the caps it fails now.
 */
export function decide(args: {
  statusCode: number;
  retryAttempt: number;
  policy: DeliveryPolicy;
  firstAttemptAt: Date;
  now: Date;
  retryAfterMs?: number | undefined;
}): Decision {
  const { statusCode, retryAttempt, policy, firstAttemptAt, now } = args;
  const outcome = classify(statusCode);
  if (outcome === "success") return { status: "success", nextRetryAfter: null };
  if (outcome === "permanent")
    return { status: "failed", nextRetryAfter: null, reason: `permanent HTTP ${statusCode}` };
  if (retryAttempt + 1 >= policy.maxAttempts) {
    return { status: "failed", nextRetryAfter: null, reason: `max attempts (${policy.maxAttempts}) reached` };
  }
  const deadline = firstAttemptAt.getTime() + policy.abortAfterMs;
  const backoffAt = now.getTime() + backoffDelay(policy, retryAttempt);
  if (backoffAt > deadline) {
    return { status: "failed", nextRetryAfter: null, reason: "abort-after window exhausted" };
  }
  const requestedAt = args.retryAfterMs === undefined ? 0 : now.getTime() + args.retryAfterMs;
  return {
    status: "to retry",
    nextRetryAfter: new Date(Math.min(Math.max(backoffAt, requestedAt), deadline)),
  };
}

/**
 * Why attempt `retryAttempt` of a delivery must not be sent (its config is gone
 * or inactive, or a cap is reached), or undefined when it may. Asked before
 * every re-send, and by reconciliation before it restarts a lost delivery.
 */
export function whyNoFurtherTry(args: {
  config: { active: boolean } | null;
  retryAttempt: number;
  policy: DeliveryPolicy;
  firstAttemptAt: Date | undefined;
  now: number;
}): string | undefined {
  const { config, retryAttempt, policy, firstAttemptAt, now } = args;
  if (!config) return "config deleted";
  if (!config.active) return "config deactivated";
  if (retryAttempt >= policy.maxAttempts) return `max attempts (${policy.maxAttempts}) reached`;
  if (firstAttemptAt && now - firstAttemptAt.getTime() > policy.abortAfterMs)
    return "abort-after window exhausted";
  return undefined;
}
