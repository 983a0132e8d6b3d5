import { createPrivateKey, type KeyObject, X509Certificate } from "node:crypto";
import type { ConfigSecrets } from "../core/config-secrets.js";
import type { EgressPolicy } from "../core/egress-policy.js";
import {
  authContext,
  hasHttpAuth,
  type SealedAuthColumn,
  type StoredAuth,
} from "../core/endpoint-auth-rows.js";
import { checkEndpoint } from "./endpoint-url.js";
import { validation } from "./errors.js";
import { MASKED_SECRET } from "./serialize.js";

// The write shape of a config's endpoint auth, applied to what is stored. A change is a
// merge: a kind absent is kept, null removes it, and inside a kind a field absent keeps
// its stored value, so one credential changes without resending the others. The schema
// (EndpointAuthChange in api/openapi.ts) checks types and lengths; this checks the
// meaning, naming the field, and never echoes a credential in an error.

export interface EndpointAuthChange {
  headers?: { name: string; value?: string }[] | null;
  basic?: { username?: string; password?: string } | null;
  bearer?: { token?: string } | null;
  oauth2?: {
    tokenUrl?: string;
    clientId?: string;
    clientSecret?: string;
    scope?: string | null;
    audience?: string | null;
  } | null;
  tls?: { certificate?: string; privateKey?: string; caBundle?: string | null } | null;
}

export const MAX_HEADERS = 20;
/** Sum of the custom headers' names and values: many servers refuse requests with over 8-16 KiB of headers. */
export const MAX_HEADER_BYTES = 8192;

const TOKEN_RE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Header values and credentials: visible ASCII, space and tab; never CR, LF or another control character. */
const FIELD_TEXT_RE = /^[\t\x20-\x7e]*$/;
/** RFC 6750 b64token. */
const BEARER_RE = /^[A-Za-z0-9\-._~+/]+=*$/;

/** Headers the service sets itself or that describe the connection, not the message. */
const RESERVED = new Set([
  "host",
  "content-length",
  "content-type",
  "user-agent",
  "connection",
  "keep-alive",
  "transfer-encoding",
  "te",
  "upgrade",
  "trailer",
  "expect",
  "traceparent",
  "tracestate",
  "baggage",
]);

/** Standard Webhooks' names of the signing headers (activities/signature-headers.ts), whatever the config's style. */
const STANDARD_SIGNING = new Set(["webhook-id", "webhook-timestamp", "webhook-signature"]);

const reservedWhy = (name: string): string | undefined => {
  const n = name.toLowerCase();
  if (n.startsWith("svc-webhook-"))
    return "the service sets the svc-webhook-* headers (signature, id, timestamp)";
  if (STANDARD_SIGNING.has(n))
    return "the service sets webhook-id, webhook-timestamp and webhook-signature (signatureHeaders standard)";
  if (n.startsWith("proxy-")) return "Proxy-* headers are hop-by-hop";
  if (RESERVED.has(n)) return "the service or the connection sets it";
  return undefined;
};

/** Throws a 400 naming `field` when `text` holds a control character (never echoing it). */
function plainText(field: string, text: string): string {
  if (!FIELD_TEXT_RE.test(text))
    throw validation(
      `${field} must be visible ASCII, spaces and tabs only (no CR, LF or other control characters)`,
    );
  return text;
}

function nonEmpty(field: string, text: string | undefined): string {
  if (text === undefined) throw validation(`missing required field "${field}"`);
  if (text === "") throw validation(`${field} must not be empty`);
  return text;
}

/** Each PEM block of `text`, or a 400 naming `field` when there is none. */
function certificates(field: string, text: string): X509Certificate[] {
  const blocks = text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g);
  if (!blocks) throw validation(`${field} must hold PEM certificates (-----BEGIN CERTIFICATE-----)`);
  return blocks.map((b, i) => {
    try {
      return new X509Certificate(b);
    } catch (err) {
      throw validation(`${field}: certificate ${i + 1} does not parse: ${(err as Error).message}`);
    }
  });
}

function privateKey(field: string, pem: string): KeyObject {
  if (/ENCRYPTED/.test(pem))
    throw validation(
      `${field}: encrypted private keys are not supported; store it unencrypted (it is sealed at rest)`,
    );
  try {
    return createPrivateKey(pem);
  } catch {
    throw validation(`${field} must be a PEM private key (PKCS#8, PKCS#1 or SEC1) and does not parse`);
  }
}

/** What applying a change needs: the config's id (sealing is bound to it), secrets, egress, error prefix. */
interface ApplyContext {
  configId: string;
  secrets: ConfigSecrets;
  egress: EgressPolicy;
  prefix: string;
  seal: (column: SealedAuthColumn, plain: string) => string;
}

/**
 * `current` with `change` applied, sealed: what to store. `prefix` names the change in
 * errors ("auth." inside a config, "" for PATCH /configs/{id}/auth).
 */
export function applyAuthChange(
  current: StoredAuth,
  change: EndpointAuthChange,
  opts: { configId: string; secrets: ConfigSecrets; egress: EgressPolicy; prefix: string },
): StoredAuth {
  const { configId, secrets } = opts;
  const seal = (column: SealedAuthColumn, plain: string) =>
    secrets.sealIn(authContext(configId, column), plain);
  const c: ApplyContext = { ...opts, seal };
  const next: StoredAuth = { ...current };
  applyHeaders(c, current, change, next);
  applyBasic(c, current, change, next);
  applyBearer(c, current, change, next);
  applyOAuth2(c, current, change, next);
  applyTls(c, current, change, next);
  checkOneAuthorization(c.prefix, change, next);
  return next;
}

/** Custom headers: names checked, values kept by name when absent, sealed together. */
function applyHeaders(
  c: ApplyContext,
  current: StoredAuth,
  change: EndpointAuthChange,
  next: StoredAuth,
): void {
  const { configId, secrets, prefix, seal } = c;
  if (change.headers === null) {
    next.header_names = [];
    next.header_values = null;
  } else if (change.headers) {
    const before = new Map<string, string>();
    if (current.header_values) {
      const values: string[] = JSON.parse(
        secrets.openIn(authContext(configId, "header_values"), current.header_values),
      );
      for (const [i, n] of current.header_names.entries()) before.set(n.toLowerCase(), values[i] ?? "");
    }
    const seen = new Set<string>();
    let bytes = 0;
    const names: string[] = [];
    const values: string[] = [];
    change.headers.forEach((h, i) => {
      const field = `${prefix}headers[${i}]`;
      if (!TOKEN_RE.test(h.name))
        throw validation(
          `${field}.name must be an HTTP header name (token characters), got ${JSON.stringify(h.name)}`,
        );
      const why = reservedWhy(h.name);
      if (why) throw validation(`${field}.name: header "${h.name}" cannot be set: ${why}`);
      const lower = h.name.toLowerCase();
      if (seen.has(lower)) throw validation(`${field}.name: header "${h.name}" is given twice`);
      seen.add(lower);
      const value = h.value ?? before.get(lower);
      if (value === undefined)
        throw validation(`missing required field "${field}.value" (a new header needs its value)`);
      plainText(`${field}.value`, value);
      bytes += Buffer.byteLength(h.name) + Buffer.byteLength(value);
      names.push(h.name);
      values.push(value);
    });
    if (bytes > MAX_HEADER_BYTES)
      throw validation(
        `${prefix}headers: names and values total ${bytes} bytes, at most ${MAX_HEADER_BYTES}`,
      );
    next.header_names = names;
    next.header_values = names.length ? seal("header_values", JSON.stringify(values)) : null;
  }
}

/** Basic auth: the username in clear, the password sealed. */
function applyBasic(
  c: ApplyContext,
  current: StoredAuth,
  change: EndpointAuthChange,
  next: StoredAuth,
): void {
  const { prefix, seal } = c;
  if (change.basic === null) {
    next.basic_username = null;
    next.basic_password = null;
  } else if (change.basic) {
    const username = change.basic.username ?? current.basic_username ?? undefined;
    nonEmpty(`${prefix}basic.username`, username);
    plainText(`${prefix}basic.username`, username!);
    if (username!.includes(":")) throw validation(`${prefix}basic.username must not contain ":" (RFC 7617)`);
    next.basic_username = username!;
    if (change.basic.password !== undefined) {
      next.basic_password = seal(
        "basic_password",
        plainText(`${prefix}basic.password`, change.basic.password),
      );
    } else if (current.basic_password === null)
      throw validation(`missing required field "${prefix}basic.password"`);
  }
}

/** A bearer token, sealed. */
function applyBearer(
  c: ApplyContext,
  current: StoredAuth,
  change: EndpointAuthChange,
  next: StoredAuth,
): void {
  const { prefix, seal } = c;
  if (change.bearer === null) next.bearer_token = null;
  else if (change.bearer) {
    if (change.bearer.token !== undefined) {
      if (!BEARER_RE.test(change.bearer.token))
        throw validation(
          `${prefix}bearer.token must be an RFC 6750 token (letters, digits, - . _ ~ + / then = padding)`,
        );
      next.bearer_token = seal("bearer_token", change.bearer.token);
    } else if (current.bearer_token === null)
      throw validation(`missing required field "${prefix}bearer.token"`);
  }
}

/** OAuth2 client credentials: the token URL checked like an endpoint, the client secret sealed. */
function applyOAuth2(
  c: ApplyContext,
  current: StoredAuth,
  change: EndpointAuthChange,
  next: StoredAuth,
): void {
  const { prefix, seal } = c;
  if (change.oauth2 === null) {
    for (const f of [
      "oauth_token_url",
      "oauth_client_id",
      "oauth_client_secret",
      "oauth_scope",
      "oauth_audience",
    ] as const)
      next[f] = null;
  } else if (change.oauth2) {
    const o = change.oauth2;
    const tokenUrl = nonEmpty(`${prefix}oauth2.tokenUrl`, o.tokenUrl ?? current.oauth_token_url ?? undefined);
    next.oauth_token_url = checkEndpoint(tokenUrl, c.egress, `${prefix}oauth2.tokenUrl`);
    const clientId = nonEmpty(`${prefix}oauth2.clientId`, o.clientId ?? current.oauth_client_id ?? undefined);
    next.oauth_client_id = plainText(`${prefix}oauth2.clientId`, clientId);
    if (o.clientSecret !== undefined)
      next.oauth_client_secret = seal(
        "oauth_client_secret",
        plainText(`${prefix}oauth2.clientSecret`, nonEmpty(`${prefix}oauth2.clientSecret`, o.clientSecret)),
      );
    else if (current.oauth_client_secret === null)
      throw validation(`missing required field "${prefix}oauth2.clientSecret"`);
    if (o.scope !== undefined)
      next.oauth_scope = o.scope === null ? null : plainText(`${prefix}oauth2.scope`, o.scope);
    if (o.audience !== undefined)
      next.oauth_audience = o.audience === null ? null : plainText(`${prefix}oauth2.audience`, o.audience);
  }
}

/** Client TLS: a certificate and its private key checked as a pair (the key sealed), and a CA bundle. */
function applyTls(c: ApplyContext, current: StoredAuth, change: EndpointAuthChange, next: StoredAuth): void {
  const { configId, secrets, prefix, seal } = c;
  if (change.tls === null) {
    next.tls_certificate = null;
    next.tls_private_key = null;
    next.tls_ca_bundle = null;
  } else if (change.tls) {
    const t = change.tls;
    if (t.certificate !== undefined || t.privateKey !== undefined) {
      // The pair is checked together: a new certificate must match the stored key and the other way round.
      const certPem = nonEmpty(
        `${prefix}tls.certificate`,
        t.certificate ?? current.tls_certificate ?? undefined,
      );
      const [leaf] = certificates(`${prefix}tls.certificate`, certPem);
      if (leaf!.validTo && Date.parse(leaf!.validTo) < Date.now())
        throw validation(`${prefix}tls.certificate expired on ${new Date(leaf!.validTo).toISOString()}`);
      const keyPem =
        t.privateKey ??
        (current.tls_private_key === null
          ? undefined
          : secrets.openIn(authContext(configId, "tls_private_key"), current.tls_private_key));
      const key = privateKey(`${prefix}tls.privateKey`, nonEmpty(`${prefix}tls.privateKey`, keyPem));
      if (!leaf!.checkPrivateKey(key))
        throw validation(`${prefix}tls.privateKey does not match the public key of ${prefix}tls.certificate`);
      next.tls_certificate = certPem;
      next.tls_private_key = seal("tls_private_key", keyPem!);
    } else if (current.tls_certificate === null && t.caBundle === undefined)
      throw validation(
        `missing required field "${prefix}tls.certificate" (with its privateKey), or "${prefix}tls.caBundle"`,
      );
    if (t.caBundle !== undefined) {
      if (t.caBundle !== null) certificates(`${prefix}tls.caBundle`, t.caBundle);
      next.tls_ca_bundle = t.caBundle;
    }
  }
}

/** At most one of basic, bearer and oauth2 (each sets Authorization), and no Authorization header beside it. */
function checkOneAuthorization(prefix: string, change: EndpointAuthChange, next: StoredAuth): void {
  const authorization = (["basic", "bearer", "oauth2"] as const).filter((k) =>
    k === "basic"
      ? next.basic_username !== null
      : k === "bearer"
        ? next.bearer_token !== null
        : next.oauth_token_url !== null,
  );
  if (authorization.length > 1) {
    const named = authorization.find((k) => change[k]) ?? authorization[1]!;
    throw validation(
      `${prefix}${named}: only one of basic, bearer and oauth2 may be configured (each sets Authorization); ${authorization
        .filter((k) => k !== named)
        .join(", ")} is configured too: remove it with null in the same change`,
    );
  }
  if (authorization.length === 1 && next.header_names.some((n) => n.toLowerCase() === "authorization"))
    throw validation(
      `${prefix}headers: an Authorization header cannot be set beside ${authorization[0]} auth`,
    );
}

/** What answers show of the stored auth: which kinds are configured and their public parts, credentials masked. */
export function endpointAuthJson(a: StoredAuth) {
  return {
    ...(a.header_names.length
      ? { headers: a.header_names.map((name) => ({ name, value: MASKED_SECRET })) }
      : {}),
    ...(a.basic_username !== null ? { basic: { username: a.basic_username, password: MASKED_SECRET } } : {}),
    ...(a.bearer_token !== null ? { bearer: { token: MASKED_SECRET } } : {}),
    ...(a.oauth_token_url !== null
      ? {
          oauth2: {
            tokenUrl: a.oauth_token_url,
            clientId: a.oauth_client_id,
            clientSecret: MASKED_SECRET,
            ...(a.oauth_scope !== null ? { scope: a.oauth_scope } : {}),
            ...(a.oauth_audience !== null ? { audience: a.oauth_audience } : {}),
          },
        }
      : {}),
    ...(a.tls_certificate !== null || a.tls_ca_bundle !== null
      ? {
          tls: {
            ...(a.tls_certificate !== null
              ? { certificate: a.tls_certificate, privateKey: MASKED_SECRET }
              : {}),
            ...(a.tls_ca_bundle !== null ? { caBundle: a.tls_ca_bundle } : {}),
          },
        }
      : {}),
  };
}

/** A config's answer with its auth summary, when it has any. */
export const withAuth = <T extends object>(json: T, auth: StoredAuth | null | undefined) =>
  auth && hasHttpAuth(auth) ? { ...json, auth: endpointAuthJson(auth) } : json;
