import { BlockList, isIP } from "node:net";
import type { EgressPolicy } from "../core/egress-policy.js";
import type { StoredAuth } from "../core/endpoint-auth-rows.js";
import type { EndpointAuthChange } from "./endpoint-auth-input.js";
import { validation } from "./errors.js";

// Where a stored credential may go. A credential was given for one
// endpoint origin (scheme, host, port) and, for the OAuth client secret, one token URL: a
// write that moves either keeps a credential only when the same request gives it again, so
// whoever may edit the endpoint cannot redirect credentials they never knew to a server of
// their own. And no credential goes over plain http:// (RFC 6749 section 2.3.1 requires TLS
// for the token endpoint; the same holds for the others), except to loopback while the
// egress policy lets sends reach it. Checked on writes only: see docs/webhooks/security.md
// for why configs stored before the rule keep delivering.

/** One credential a config sends to its endpoint, and whether this request gave it. */
interface Held {
  field: string;
  kind: "headers" | "basic" | "bearer" | "oauth2";
  given: boolean;
}

/** The credentials `auth` sends to the endpoint (the OAuth access token stands for the client secret). */
function held(auth: StoredAuth, change: EndpointAuthChange | undefined, prefix: string): Held[] {
  const list: Held[] = auth.header_names.map((_, i) => ({
    field: `${prefix}headers[${i}].value`,
    kind: "headers",
    // A header change lists every header in order; one without a value keeps the stored one.
    given: Boolean(change?.headers) && change!.headers![i]?.value !== undefined,
  }));
  if (auth.basic_username !== null)
    list.push({
      field: `${prefix}basic.password`,
      kind: "basic",
      given: change?.basic?.password !== undefined,
    });
  if (auth.bearer_token !== null)
    list.push({ field: `${prefix}bearer.token`, kind: "bearer", given: change?.bearer?.token !== undefined });
  if (auth.oauth_token_url !== null)
    list.push({
      field: `${prefix}oauth2.clientSecret`,
      kind: "oauth2",
      given: change?.oauth2?.clientSecret !== undefined,
    });
  return list;
}

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet("127.0.0.0", 8, "ipv4");
LOOPBACK.addAddress("::1", "ipv6");

/**
 * Undefined when credentials may go to `url`: https, or http to loopback (a loopback literal
 * or `localhost`) that the egress policy allows. Otherwise why not.
 */
export function plainHttpReason(url: string, egress: EgressPolicy): string | undefined {
  const u = new URL(url);
  if (u.protocol !== "http:") return undefined;
  const host = u.hostname.replace(/^\[|\]$/g, "").toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(host)?.[1];
  const literal = mapped ?? host;
  const family = isIP(literal);
  const loopback =
    // Only the name itself: whether *.localhost resolves to loopback depends on the resolver.
    host === "localhost"
      ? "127.0.0.1"
      : family && LOOPBACK.check(literal, family === 4 ? "ipv4" : "ipv6")
        ? literal
        : undefined;
  if (loopback === undefined)
    return "credentials are not sent over plain http:// (only loopback is excepted, while the egress policy allows it): use https";
  const denied = egress.reason(loopback);
  return denied
    ? `credentials are not sent over plain http://, and loopback is excepted only while the egress policy allows it: ${denied}`
    : undefined;
}

export interface BindingCheck {
  /** The config's endpoint before the write; null for a new config. */
  endpointBefore: string | null;
  endpointAfter: string;
  authBefore: StoredAuth;
  authAfter: StoredAuth;
  change: EndpointAuthChange | undefined;
  egress: EgressPolicy;
  /** How the change's fields are named in errors: "auth." inside a config, "" on /auth. */
  prefix: string;
}

/** Throws a 400 naming the field when the write would send a credential where it was not given for. */
export function checkCredentialBinding(c: BindingCheck): void {
  const { prefix, authBefore, authAfter } = c;
  const creds = held(authAfter, c.change, prefix);
  const endpointChanged = c.endpointBefore !== c.endpointAfter;
  // Plain http: only for a write that moves the endpoint or gives a credential, so a config
  // stored before this rule can still be edited in other ways.
  const given = creds.filter((h) => h.given);
  if (creds.length > 0 && (endpointChanged || given.length > 0)) {
    const why = plainHttpReason(c.endpointAfter, c.egress);
    if (why) {
      const field = endpointChanged ? "endpoint" : `${prefix}${given[0]!.kind}`;
      const kinds = [...new Set(creds.map((h) => `${prefix}${h.kind}`))].join(", ");
      throw validation(`${field}: the config holds credentials (${kinds}) and ${why}`);
    }
  }
  const tokenUrl = authAfter.oauth_token_url;
  const secretGiven = c.change?.oauth2?.clientSecret !== undefined;
  const tokenUrlChanged = tokenUrl !== authBefore.oauth_token_url;
  if (tokenUrl !== null && (tokenUrlChanged || secretGiven)) {
    const why = plainHttpReason(tokenUrl, c.egress);
    if (why) throw validation(`${prefix}oauth2.tokenUrl: the client secret goes to it, and ${why}`);
  }
  // A credential kept from before must have been set for this origin and token URL.
  const from = c.endpointBefore === null ? null : new URL(c.endpointBefore).origin;
  const to = new URL(c.endpointAfter).origin;
  if (from !== null && from !== to) {
    const missing = creds.find((h) => !h.given);
    if (missing)
      throw validation(
        `${missing.field} must be given again in the same request (or ${prefix}${missing.kind} removed with null): ` +
          `the endpoint moves from ${from} to ${to}, and a stored credential stays bound to the origin it was set for`,
      );
  }
  if (authBefore.oauth_token_url !== null && tokenUrl !== null && tokenUrlChanged && !secretGiven)
    throw validation(
      `${prefix}oauth2.clientSecret must be given again in the same request: ${prefix}oauth2.tokenUrl changes, ` +
        "and the stored client secret stays bound to the token URL it was set for",
    );
}
