import http, { type IncomingMessage } from "node:http";
import https from "node:https";
import { type Context, context, propagation, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { VERSION } from "../common/version.js";
import { EgressDenied, type EgressPolicy } from "../core/egress-policy.js";
import { keptResponseHeaders, recordedRequestHeaders, withoutSentCredentials } from "./attempt-exchange.js";
import { type DeliveryHeaderFields, deliveryHeaders } from "./delivery-headers.js";
import { parseRetryAfter } from "./delivery-policy.js";
import type { SendResult } from "./destinations/message.js";

export type { SendResult };

export const SEND_TIMEOUT_MS = 30_000;
/** Only this much of an endpoint's answer is read, for logs. */
export const RESPONSE_EXCERPT_BYTES = 64 * 1024;
/** Redirect hops followed before the send counts as failed. */
export const MAX_REDIRECTS = 10;
const REDIRECT = new Set([301, 302, 303, 307, 308]);

/** One POST: what its delivery headers are made of (activities/delivery-headers.ts), where it goes, and how. */
export interface SendRequest extends DeliveryHeaderFields {
  endpoint: string;
  timeoutMs?: number;
  /** Where the send may go; checked on the resolved address of every hop. */
  egress?: EgressPolicy | undefined;
  /** The config's custom headers and Authorization (activities/endpoint-auth-send.ts): sent to the endpoint's origin only. */
  endpointHeaders?: Record<string, string> | undefined;
  /** Client certificate and CA bundle for the endpoint's origin only. */
  tls?: EndpointTls | undefined;
}

/** TLS options of node:https for a config's endpoint (PEM). */
export interface EndpointTls {
  cert?: string;
  key?: string;
  /** Replaces the system's trusted roots for the endpoint. */
  ca?: string;
}

/**
 * One signed POST of a webhook, following redirects (each hop POSTs the same
 * signed body again; a webhook turned into a GET would be meaningless). Never
 * throws for the endpoint's behaviour: that is the result.
 */
export async function sendWebhook(req: SendRequest): Promise<SendResult> {
  // With --tracing, a client span child of the activity's; its context goes to the
  // receiver as `traceparent`. Without, the API's no-op tracer costs next to nothing.
  const span = tracer.startSpan("POST", {
    kind: SpanKind.CLIENT,
    attributes: { "http.request.method": "POST", "webhooks.webhook_id": req.webhookId },
  });
  const result = await send(req, trace.setSpan(context.active(), span));
  span.setAttribute("http.response.status_code", result.statusCode);
  if (result.statusCode < 200 || result.statusCode > 299)
    span.setStatus({ code: SpanStatusCode.ERROR, message: result.error ?? `HTTP ${result.statusCode}` });
  span.end();
  return result;
}

const tracer = trace.getTracer("webhooks");

async function send(req: SendRequest, traceContext: Context): Promise<SendResult> {
  const started = Date.now();
  const timestamp = Math.floor(started / 1000);
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(req.body)),
    "user-agent": `etp-webhooks/${VERSION}`,
    ...deliveryHeaders(req, timestamp),
  };
  propagation.inject(traceContext, headers);
  const signal = AbortSignal.timeout(req.timeoutMs ?? SEND_TIMEOUT_MS);
  let requestHeaders: Record<string, string> | undefined;
  try {
    let url = new URL(req.endpoint);
    const origin = url.origin;
    for (let hop = 0; ; hop++) {
      // A redirect to another origin gets neither the config's headers nor its certificate:
      // credentials go where the config says, as browsers drop Authorization across origins.
      const own = url.origin === origin;
      requestHeaders = recordedRequestHeaders(headers, own ? req.endpointHeaders : undefined);
      const res = await postOnce(
        url,
        own && req.endpointHeaders ? { ...req.endpointHeaders, ...headers } : headers,
        req.body,
        signal,
        req.egress,
        own ? req.tls : undefined,
      );
      const location = res.headers.location;
      if (REDIRECT.has(res.statusCode ?? 0) && location) {
        res.destroy();
        if (hop >= MAX_REDIRECTS) throw new Error(`more than ${MAX_REDIRECTS} redirects`);
        url = new URL(location, url);
        if (url.protocol !== "http:" && url.protocol !== "https:")
          throw new Error(`redirect to a ${url.protocol} URL`);
        continue;
      }
      const responseExcerpt = withoutSentCredentials(await readExcerpt(res), req.endpointHeaders);
      const retryAfter = res.headers["retry-after"];
      const retryAfterMs = parseRetryAfter(
        typeof retryAfter === "string" ? retryAfter : undefined,
        Date.now(),
      );
      return {
        statusCode: res.statusCode ?? 0,
        ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
        responseExcerpt,
        requestHeaders,
        responseHeaders: keptResponseHeaders(res.headers),
        durationMs: Date.now() - started,
      };
    }
  } catch (err) {
    const permanent = err instanceof EgressDenied || UNBUILDABLE.has((err as { code?: string }).code ?? "");
    return {
      statusCode: 0,
      error: describeError(err, signal),
      ...(permanent ? { permanent } : {}),
      responseExcerpt: "",
      ...(requestHeaders && !permanent ? { requestHeaders } : {}),
      durationMs: Date.now() - started,
    };
  }
}

/**
 * Errors Node raises while it builds a request, before anything is sent: the same input
 * fails the same way on every retry. EGRESS_DENIED comes from the policy's DNS lookup.
 */
const UNBUILDABLE = new Set([
  "EGRESS_DENIED",
  "ERR_INVALID_CHAR",
  "ERR_INVALID_HTTP_TOKEN",
  "ERR_HTTP_INVALID_HEADER_VALUE",
  "ERR_INVALID_PROTOCOL",
  "ERR_INVALID_URL",
  "ERR_UNESCAPED_CHARACTERS",
]);

/** One POST, its address checked by the egress policy; resolves with the answer's head. */
export function postOnce(
  url: URL,
  headers: Record<string, string>,
  body: string,
  signal: AbortSignal,
  egress: EgressPolicy | undefined,
  tls?: EndpointTls,
): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const denied = egress?.literalReason(url);
    if (denied) return reject(new EgressDenied(`egress policy: ${denied}`));
    const request = (url.protocol === "https:" ? https : http).request(
      url,
      {
        method: "POST",
        headers,
        signal,
        ...(egress ? { lookup: egress.lookup } : {}),
        ...(tls && url.protocol === "https:" ? tls : {}),
      },
      resolve,
    );
    request.once("error", reject);
    request.end(body);
  });
}

/** Up to RESPONSE_EXCERPT_BYTES of the answer; a body cut off (timeout, reset) keeps what came. */
export async function readExcerpt(res: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of res) {
      chunks.push(chunk as Buffer);
      size += (chunk as Buffer).length;
      if (size >= RESPONSE_EXCERPT_BYTES) break;
    }
  } catch {
    // The status already arrived; a broken body does not change the outcome.
  } finally {
    res.destroy();
  }
  return Buffer.concat(chunks).subarray(0, RESPONSE_EXCERPT_BYTES).toString("utf8");
}

function describeError(err: unknown, signal: AbortSignal): string {
  if (signal.aborted) return "timeout: no answer within the send timeout";
  const e = err as Error & { code?: string };
  if (e instanceof EgressDenied) return e.message;
  return e.code && !e.message.includes(e.code) ? `${e.code}: ${e.message}` : e.message;
}
