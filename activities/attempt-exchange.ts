import type { IncomingHttpHeaders } from "node:http";

// What an attempt row keeps of its POST and of the endpoint's answer (the attempts'
// `exchange` column), so whoever reads the delivery sees why it failed and what was sent:
// the request's headers as sent (credentials masked; the signing headers whole, so a
// receiver's check can be redone by hand) and a bounded excerpt of the answer (a few
// headers, the body's first EXCERPT_BODY_BYTES). It lives and goes with its row.

/** How much of an answer's body a row keeps (the send reads more, for its log line). */
export const EXCERPT_BODY_BYTES = 1024;
/** The longest header value a row keeps. */
const HEADER_VALUE_CHARS = 256;
/** The answer's headers worth keeping: what explains a refusal, never a cookie or a credential. */
export const KEPT_RESPONSE_HEADERS = [
  "content-type",
  "content-length",
  "retry-after",
  "location",
  "www-authenticate",
  "x-request-id",
] as const;
/** What stands for a credential's value. */
export const MASK = "********";

export interface AttemptExchange {
  /** The headers of the POST (its last hop), values of custom headers and Authorization masked. */
  requestHeaders: Record<string, string>;
  /** Absent when no answer came. */
  response?: { headers: Record<string, string>; body: string; truncated: boolean };
}

/** The parts of a send's result an exchange is made of (activities/http-send.ts SendResult). */
export interface ExchangeParts {
  statusCode: number;
  requestHeaders?: Record<string, string> | undefined;
  responseHeaders?: Record<string, string> | undefined;
  responseExcerpt: string;
}

/** The row's exchange; null when nothing was sent (no request headers). */
export function exchangeOf(sent: ExchangeParts): AttemptExchange | null {
  if (!sent.requestHeaders) return null;
  if (sent.statusCode === 0) return { requestHeaders: sent.requestHeaders };
  const body = storable(sent.responseExcerpt);
  const bytes = Buffer.from(body);
  const cut = bytes.length > EXCERPT_BODY_BYTES ? utf8Prefix(bytes, EXCERPT_BODY_BYTES) : body;
  return {
    requestHeaders: sent.requestHeaders,
    response: { headers: sent.responseHeaders ?? {}, body: cut, truncated: cut !== body },
  };
}

/** The kept headers of an answer, each value at most HEADER_VALUE_CHARS. */
export function keptResponseHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const name of KEPT_RESPONSE_HEADERS) {
    const value = headers[name];
    if (value !== undefined) kept[name] = storable(String(value)).slice(0, HEADER_VALUE_CHARS);
  }
  return kept;
}

/** The request's headers to keep: the endpoint's own (custom headers, Authorization) masked. */
export const recordedRequestHeaders = (
  sent: Record<string, string>,
  endpointHeaders: Record<string, string> | undefined,
): Record<string, string> => ({
  ...Object.fromEntries(Object.keys(endpointHeaders ?? {}).map((name) => [name, MASK])),
  ...sent,
});

/**
 * The answer's text with the endpoint's credential values masked: an endpoint that echoes
 * its request (many test receivers do) must not hand back what the API keeps write-only.
 */
export function withoutSentCredentials(
  text: string,
  endpointHeaders: Record<string, string> | undefined,
): string {
  const values = Object.values(endpointHeaders ?? {}).flatMap((v) => [v, v.replace(/^\w+ /, "")]);
  // Longest first, so a header's whole value goes before its credential part; short values
  // would mask ordinary words.
  let out = text;
  for (const value of [...new Set(values)].sort((a, b) => b.length - a.length))
    if (value.length >= 6) out = out.split(value).join(MASK);
  return out;
}

/** PostgreSQL's jsonb holds no NUL character: it stands as U+FFFD like any undecodable byte. */
const storable = (text: string) => text.replaceAll("\u0000", "\uFFFD");

/** The longest prefix of `bytes` within `max` that ends on a character boundary, as text. */
function utf8Prefix(bytes: Buffer, max: number): string {
  let end = max;
  // A continuation byte (10xxxxxx) at the cut means a character straddles it: cut before it.
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString("utf8");
}
