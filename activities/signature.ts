import { createHmac, timingSafeEqual } from "node:crypto";

// Signatures of outgoing webhooks: HMAC-SHA256 over `<webhook_id>.<unix_seconds>.<body>`,
// keyed by the base64-decoded config secret, sent as `v1,<base64>`. Several
// signatures (during a secret's overlap window) are space-separated. This is
// the Standard Webhooks scheme, so its verifiers accept our deliveries.

const digest = (secret: string, webhookId: string, timestamp: number, body: string | Buffer): Buffer =>
  createHmac("sha256", Buffer.from(secret, "base64"))
    .update(`${webhookId}.${timestamp}.`)
    .update(body)
    .digest();

/** The signature header's value (`svc-webhook-signature` or `webhook-signature`) for one or more secrets (newest first). */
export function signatureHeader(
  secrets: string[],
  webhookId: string,
  timestamp: number,
  body: string | Buffer,
): string {
  return secrets.map((s) => `v1,${digest(s, webhookId, timestamp, body).toString("base64")}`).join(" ");
}

export interface VerifyOptions {
  /** Reject timestamps further than this from now (seconds); default 300, 0 disables. */
  toleranceSeconds?: number;
  now?: number;
}

/**
 * Receiver side: true when any `v1,` signature in the header matches any of the
 * secrets for exactly these body bytes. Comparison is constant-time.
 */
export function verifySignature(
  secrets: string | string[],
  header: { id: string; timestamp: string; signature: string },
  body: string | Buffer,
  opts: VerifyOptions = {},
): boolean {
  const timestamp = Number(header.timestamp);
  if (!Number.isInteger(timestamp)) return false;
  const tolerance = opts.toleranceSeconds ?? 300;
  const nowSeconds = Math.floor((opts.now ?? Date.now()) / 1000);
  if (tolerance > 0 && Math.abs(nowSeconds - timestamp) > tolerance) return false;
  const offered = header.signature
    .split(" ")
    .filter((s) => s.startsWith("v1,"))
    .map((s) => Buffer.from(s.slice(3), "base64"));
  for (const secret of Array.isArray(secrets) ? secrets : [secrets]) {
    const expected = digest(secret, header.id, timestamp, body);
    if (offered.some((sig) => sig.length === expected.length && timingSafeEqual(sig, expected))) return true;
  }
  return false;
}
