import type { SignatureHeaderStyle } from "../core/options.js";
import { BATCH_IDS_HEADER } from "./batch-body.js";
import { idempotencyKeyHeader } from "./idempotency-key-header.js";
import { signatureHeader } from "./signature.js";
import { signingHeaders } from "./signature-headers.js";

// The headers that say what a delivery is, whatever carries it: the signature, id and
// timestamp (named in the config's style), the test flag, the event's idempotency key and
// a batch's webhook ids. An HTTP send adds its transport headers around them
// (activities/http-send.ts); a broker destination sends exactly these
// (activities/send-destination.ts).

/** What the headers are made of. */
export interface DeliveryHeaderFields {
  webhookId: string;
  body: string;
  /** Secrets to sign with (the current one first; a rotated one during its overlap window). */
  secrets: string[];
  idempotencyKey: string;
  test: boolean;
  /** The names of the signing headers (activities/signature-headers.ts: the config's, else the deployment's); `svc` when absent. */
  signatureHeaders?: SignatureHeaderStyle | undefined;
  /** A batch's events' webhook ids (activities/batch-body.ts); `webhookId` is then the batch's id. */
  batchIds?: readonly string[] | undefined;
}

/** The headers of one send signed at `timestamp` (unix seconds), names in lower case. */
export function deliveryHeaders(req: DeliveryHeaderFields, timestamp: number): Record<string, string> {
  const headers: Record<string, string> = {
    ...signingHeaders(req.signatureHeaders ?? "svc", {
      webhookId: req.webhookId,
      timestamp,
      signature: signatureHeader(req.secrets, req.webhookId, timestamp, req.body),
    }),
    "svc-webhook-test": String(req.test),
  };
  if (req.batchIds) headers[BATCH_IDS_HEADER] = req.batchIds.join(",");
  if (req.idempotencyKey) headers["svc-webhook-idempotency-key"] = idempotencyKeyHeader(req.idempotencyKey);
  return headers;
}
