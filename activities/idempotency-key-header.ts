// How an event's idempotency key travels in `svc-webhook-idempotency-key`. A header value is
// bytes that receivers read as ASCII (Latin-1 at best); Node refuses control characters and
// anything above U+00FF, and proxies trim leading and trailing spaces. So a key of visible
// ASCII (inner spaces allowed) goes as it is, and any other key goes as an RFC 8187
// ext-value: `UTF-8''` and the key's UTF-8 bytes percent-encoded. Every common runtime undoes
// that (decodeURIComponent, urllib.parse.unquote, url.PathUnescape). A plain key that itself
// starts with the prefix is encoded too, so the prefix always means "encoded".

export const ENCODED_KEY_PREFIX = "UTF-8''";

const PLAIN = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

/** The header value that carries `key`. */
export function idempotencyKeyHeader(key: string): string {
  if (PLAIN.test(key) && !key.toUpperCase().startsWith(ENCODED_KEY_PREFIX.toUpperCase())) return key;
  // Lone surrogates (refused where events enter; only in deliveries started before that)
  // have no UTF-8 form. encodeURIComponent leaves ' ( ) * as they are; attr-char does not.
  const encoded = encodeURIComponent(key.replace(/\p{Cs}/gu, "\uFFFD")).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return ENCODED_KEY_PREFIX + encoded;
}

/** Receiver side: the key a header value carries (the inverse of idempotencyKeyHeader). */
export function idempotencyKeyFromHeader(value: string): string {
  return value.toUpperCase().startsWith(ENCODED_KEY_PREFIX.toUpperCase())
    ? decodeURIComponent(value.slice(ENCODED_KEY_PREFIX.length))
    : value;
}
