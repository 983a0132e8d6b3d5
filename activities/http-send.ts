import { VERSION } from "../common/version.js";
import { parseRetryAfter } from "./delivery-policy.js";
import { signatureHeader } from "./signature.js";

export const SEND_TIMEOUT_MS = 30_000;
/** Only this much of an endpoint's answer is read, for logs. */
export const RESPONSE_EXCERPT_BYTES = 64 * 1024;

export interface SendRequest {
  endpoint: string;
  webhookId: string;
  body: string;
  /** Secrets to sign with (the current one first; a rotated one during its overlap window). */
  secrets: string[];
  idempotencyKey: string;
  test: boolean;
  timeoutMs?: number;
}

export interface SendResult {
  /** HTTP status, or 0 when no answer came (connection error, timeout, bad redirect). */
  statusCode: number;
  retryAfterMs?: number;
  error?: string;
  responseExcerpt: string;
  durationMs: number;
}

/** One signed POST of a webhook. Never throws for the endpoint's behaviour: that is the result. */
export async function sendWebhook(req: SendRequest): Promise<SendResult> {
  const started = Date.now();
  const timestamp = Math.floor(started / 1000);
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "user-agent": `etp-webhooks/${VERSION}`,
    "svc-webhook-id": req.webhookId,
    "svc-webhook-timestamp": String(timestamp),
    "svc-webhook-signature": signatureHeader(req.secrets, req.webhookId, timestamp, req.body),
    "svc-webhook-test": String(req.test),
  };
  if (req.idempotencyKey) headers["svc-webhook-idempotency-key"] = req.idempotencyKey;
  try {
    const res = await fetch(req.endpoint, {
      method: "POST",
      headers,
      body: req.body,
      redirect: "follow",
      signal: AbortSignal.timeout(req.timeoutMs ?? SEND_TIMEOUT_MS),
    });
    const responseExcerpt = await readExcerpt(res);
    const retryAfterMs = parseRetryAfter(res.headers.get("retry-after"), Date.now());
    return {
      statusCode: res.status,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      responseExcerpt,
      durationMs: Date.now() - started,
    };
  } catch (err) {
    return {
      statusCode: 0,
      error: describeFetchError(err),
      responseExcerpt: "",
      durationMs: Date.now() - started,
    };
  }
}

async function readExcerpt(res: Response): Promise<string> {
  if (!res.body) return "";
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < RESPONSE_EXCERPT_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } catch {
    // A body cut off mid-way does not change the outcome: the status already arrived.
  } finally {
    await reader.cancel().catch(() => {});
  }
  return Buffer.concat(chunks).subarray(0, RESPONSE_EXCERPT_BYTES).toString("utf8");
}

function describeFetchError(err: unknown): string {
  const e = err as Error & { cause?: Error & { code?: string } };
  if (e.name === "TimeoutError") return "timeout: no answer within the send timeout";
  const cause = e.cause;
  if (cause) return cause.code ? `${cause.code}: ${cause.message}` : cause.message;
  return e.message;
}
