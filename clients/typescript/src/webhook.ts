import { createHmac, timingSafeEqual } from "node:crypto";

// Receiver side: checks that a delivery was signed by the service. The scheme is Standard
// Webhooks: HMAC-SHA256 over `<id>.<unix seconds>.<body>`, keyed by the base64-decoded
// secret (written with or without a `whsec_` prefix), sent as space-separated `v1,<base64>`
// signatures (two while a rotated secret overlaps). The headers are `svc-webhook-id`,
// `svc-webhook-timestamp` and `svc-webhook-signature`, or the same without `svc-`.

export type VerificationFailure =
  | "missing-header"
  | "invalid-timestamp"
  | "timestamp-out-of-tolerance"
  | "invalid-secret"
  | "no-matching-signature";

export class WebhookVerificationError extends Error {
  override readonly name = "WebhookVerificationError";
  constructor(
    readonly code: VerificationFailure,
    message: string,
  ) {
    super(message);
  }
}

/** Headers as fetch (Headers), node:http (IncomingHttpHeaders) or a plain object give them. */
export type WebhookHeaders =
  | { get(name: string): string | null }
  | Record<string, string | string[] | undefined>;

export interface VerifyOptions {
  /** Largest distance between the timestamp and now, in seconds (default 300); 0 turns the check off. */
  toleranceSeconds?: number;
  /** Now, in unix seconds (default: the clock). */
  now?: number;
}

export interface VerifiedWebhook {
  /** The webhook (delivery) id: the same on every retry of one delivery, a key to drop duplicates. */
  id: string;
  /** When it was signed, in unix seconds. */
  timestamp: number;
}

const PREFIXES = ["webhook-", "svc-webhook-"] as const;

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof headers.get === "function")
    return (headers as { get(n: string): string | null }).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value.join(" ") : value;
}

/** The id, timestamp and signature headers of one naming, the Standard Webhooks one first. */
function signedHeaders(headers: WebhookHeaders): { id: string; timestamp: string; signature: string } {
  const prefix = PREFIXES.find((p) => header(headers, `${p}id`) !== undefined) ?? PREFIXES[1];
  const values = ["id", "timestamp", "signature"].map((n) => header(headers, `${prefix}${n}`));
  const missing = ["id", "timestamp", "signature"].filter((_, i) => !values[i]);
  if (missing.length > 0)
    throw new WebhookVerificationError(
      "missing-header",
      `missing header ${missing.map((n) => prefix + n).join(", ")} (or the same names without "svc-")`,
    );
  const [id, timestamp, signature] = values as [string, string, string];
  return { id, timestamp, signature };
}

function key(secret: string): Buffer {
  const text = secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text) || text.length % 4 !== 0)
    throw new WebhookVerificationError("invalid-secret", "the secret is not base64 (with or without whsec_)");
  return Buffer.from(text, "base64");
}

/**
 * Verifies one delivery: `body` must be the exact bytes received. Returns its id and
 * timestamp, or throws WebhookVerificationError saying why it does not verify. With
 * several secrets (a rotation on the receiver's side), any one of them is enough.
 */
export function verifyWebhook(
  secret: string | readonly string[],
  headers: WebhookHeaders,
  body: string | Uint8Array,
  options: VerifyOptions = {},
): VerifiedWebhook {
  const keys = (typeof secret === "string" ? [secret] : secret).map(key);
  const signed = signedHeaders(headers);
  if (!/^\d+$/.test(signed.timestamp))
    throw new WebhookVerificationError(
      "invalid-timestamp",
      `timestamp ${JSON.stringify(signed.timestamp)} is not unix seconds`,
    );
  const timestamp = Number(signed.timestamp);
  const tolerance = options.toleranceSeconds ?? 300;
  const now = options.now ?? Math.floor(Date.now() / 1000);
  if (tolerance > 0 && Math.abs(now - timestamp) > tolerance)
    throw new WebhookVerificationError(
      "timestamp-out-of-tolerance",
      `timestamp ${timestamp} is ${now - timestamp} s from now, more than ${tolerance} s`,
    );
  const offered = signed.signature
    .split(" ")
    .filter((s) => s.startsWith("v1,"))
    .map((s) => Buffer.from(s.slice(3), "base64"));
  for (const k of keys) {
    const expected = createHmac("sha256", k).update(`${signed.id}.${timestamp}.`).update(body).digest();
    if (offered.some((sig) => sig.length === expected.length && timingSafeEqual(sig, expected)))
      return { id: signed.id, timestamp };
  }
  throw new WebhookVerificationError(
    "no-matching-signature",
    "no v1 signature matches the body with this secret",
  );
}
