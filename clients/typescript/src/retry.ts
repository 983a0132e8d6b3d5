// Retries of answers that say "not now": 429 (a quota or rate limit) and 503 (a dependency
// of the API did not answer in time). The wait is the answer's Retry-After when it has one
// (seconds or an HTTP date), else a doubling backoff; a wait longer than maxDelayMs is not
// waited for: that answer goes back to the caller as it is.

export interface RetryPolicy {
  /** Retries after the first try; 0 disables retrying. */
  maxRetries: number;
  /** Wait before the first retry of an answer without Retry-After; doubles on each retry. */
  initialDelayMs: number;
  /** Longest single wait; a longer Retry-After returns the answer instead. */
  maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = {
  maxRetries: 3,
  initialDelayMs: 500,
  maxDelayMs: 30_000,
};
export const RETRIED_STATUSES: ReadonlySet<number> = new Set([429, 503]);

/** The wait a Retry-After value asks for (ms), or undefined when absent or not understood. */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

function checked(policy: Partial<RetryPolicy>): RetryPolicy {
  const merged = { ...DEFAULT_RETRY_POLICY, ...policy };
  for (const [field, value] of Object.entries(merged))
    if (!Number.isInteger(value) || value < 0)
      throw new TypeError(`retry.${field} must be an integer ≥ 0, got ${String(value)}`);
  return merged;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `fetch` retrying 429 and 503 answers under `policy` (every method: see the manual on 503 and writes). */
export function retryingFetch(
  fetch: (request: Request) => Promise<Response>,
  policy: Partial<RetryPolicy> = {},
): (request: Request) => Promise<Response> {
  const p = checked(policy);
  return async (request) => {
    for (let retry = 0; ; retry++) {
      // A body can be sent once: every try but the last sends a copy.
      const response = await fetch(retry < p.maxRetries ? request.clone() : request);
      if (!RETRIED_STATUSES.has(response.status) || retry >= p.maxRetries) return response;
      const wait = retryAfterMs(response.headers.get("retry-after")) ?? p.initialDelayMs * 2 ** retry;
      if (wait > p.maxDelayMs) return response;
      await response.body?.cancel();
      await sleep(wait);
    }
  };
}
