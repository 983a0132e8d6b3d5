import type { SignatureHeaderStyle } from "../core/options.js";

// The names a delivery's id, timestamp and signature travel under. `svc`, the product's own:
// svc-webhook-id, svc-webhook-timestamp, svc-webhook-signature. `standard`: exactly the names
// Standard Webhooks gives them, webhook-id, webhook-timestamp, webhook-signature, so its
// libraries verify a delivery unchanged (the signed string and the key are the same in both
// styles, activities/signature.ts). The standard names only these three: the product's other
// headers (svc-webhook-test, svc-webhook-idempotency-key, svc-webhook-batch-ids) keep their
// names in both styles, since `webhook-*` is the standard's to extend and a receiver's code
// reading them must not change when a config changes style.

interface SigningHeaderNames {
  id: string;
  timestamp: string;
  signature: string;
}

const NAMES: Record<SignatureHeaderStyle, SigningHeaderNames> = {
  svc: { id: "svc-webhook-id", timestamp: "svc-webhook-timestamp", signature: "svc-webhook-signature" },
  standard: { id: "webhook-id", timestamp: "webhook-timestamp", signature: "webhook-signature" },
};

/** The style a send uses: the config's own, else the deployment's (--signature-headers). */
export const signatureHeadersOf = (
  configStyle: SignatureHeaderStyle | null | undefined,
  deploymentStyle: SignatureHeaderStyle,
): SignatureHeaderStyle => configStyle ?? deploymentStyle;

/** The three signing headers of one send, named in `style`. */
export function signingHeaders(
  style: SignatureHeaderStyle,
  signed: { webhookId: string; timestamp: number; signature: string },
): Record<string, string> {
  const names = NAMES[style];
  return {
    [names.id]: signed.webhookId,
    [names.timestamp]: String(signed.timestamp),
    [names.signature]: signed.signature,
  };
}
