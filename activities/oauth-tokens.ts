import { createHash } from "node:crypto";
import { EgressDenied, type EgressPolicy } from "../core/egress-policy.js";
import type { EndpointAuth } from "../core/endpoint-auth-rows.js";
import { postOnce, readExcerpt } from "./http-send.js";

// OAuth 2.0 client credentials (RFC 6749 section 4.4) for endpoints that want a bearer
// token: one token per config, shared by every send of this process, fetched before the
// send that first needs it, kept until shortly before it expires. Concurrent sends that
// find no valid token wait for one fetch (single-flight). A token is never logged.

type OAuth2 = NonNullable<EndpointAuth["oauth2"]>;

/** A token without expires_in is kept this long (a 401 refreshes it sooner). */
export const DEFAULT_TOKEN_LIFETIME_MS = 300_000;
/** Renewed this long before it expires, at most (a tenth of its lifetime for short ones). */
export const EXPIRY_MARGIN_MS = 30_000;

/** A token endpoint that gave no token: the attempt fails with this message, and is retried as any. */
export class TokenFetchError extends Error {
  constructor(
    message: string,
    /** The egress policy refused the token URL: no retry can change that. */
    readonly permanent = false,
  ) {
    super(message);
    this.name = "TokenFetchError";
  }
}

interface Entry {
  /** The credentials the token was fetched with: a changed config fetches anew. */
  fingerprint: string;
  token?: string;
  /** When it is renewed (ms since epoch). */
  renewAt: number;
  pending?: Promise<string>;
}

const fingerprintOf = (o: OAuth2) =>
  createHash("sha256")
    .update(JSON.stringify([o.tokenUrl, o.clientId, o.clientSecret, o.scope ?? null, o.audience ?? null]))
    .digest("base64url");

export class OAuthTokens {
  private readonly entries = new Map<string, Entry>();
  /** Token requests made, for tests and metrics. */
  fetches = 0;

  constructor(private readonly egress: EgressPolicy | undefined) {}

  /** A valid token for the config: the cached one, or one fetched (once, however many sends ask). */
  token(configId: string, oauth: OAuth2, timeoutMs: number): Promise<string> {
    const fingerprint = fingerprintOf(oauth);
    let entry = this.entries.get(configId);
    if (entry?.fingerprint !== fingerprint) {
      entry = { fingerprint, renewAt: 0 };
      this.entries.set(configId, entry);
    }
    if (entry.token && Date.now() < entry.renewAt) return Promise.resolve(entry.token);
    if (!entry.pending) {
      const e = entry;
      const pending = this.fetch(oauth, timeoutMs)
        .then(({ token, lifetimeMs }) => {
          e.token = token;
          e.renewAt = Date.now() + lifetimeMs - Math.min(EXPIRY_MARGIN_MS, lifetimeMs / 10);
          return token;
        })
        .finally(() => {
          e.pending = undefined;
        });
      e.pending = pending;
      return pending;
    }
    return entry.pending;
  }

  /** The endpoint refused `token` (401): the next ask fetches a new one, unless another send already did. */
  invalidate(configId: string, token: string): void {
    const entry = this.entries.get(configId);
    if (entry?.token === token) {
      entry.token = undefined;
      entry.renewAt = 0;
    }
  }

  private async fetch(oauth: OAuth2, timeoutMs: number): Promise<{ token: string; lifetimeMs: number }> {
    this.fetches++;
    const where = `OAuth token endpoint ${oauth.tokenUrl}`;
    const form = new URLSearchParams({ grant_type: "client_credentials" });
    if (oauth.scope) form.set("scope", oauth.scope);
    if (oauth.audience) form.set("audience", oauth.audience);
    const body = form.toString();
    // client_secret_basic, the method RFC 6749 section 2.3.1 requires every server to support.
    const basic = Buffer.from(
      `${encodeURIComponent(oauth.clientId)}:${encodeURIComponent(oauth.clientSecret)}`,
    ).toString("base64");
    const signal = AbortSignal.timeout(timeoutMs);
    let status: number;
    let text: string;
    try {
      const res = await postOnce(
        new URL(oauth.tokenUrl),
        {
          "content-type": "application/x-www-form-urlencoded",
          "content-length": String(Buffer.byteLength(body)),
          accept: "application/json",
          authorization: `Basic ${basic}`,
        },
        body,
        signal,
        this.egress,
      );
      status = res.statusCode ?? 0;
      text = await readExcerpt(res);
    } catch (err) {
      if (signal.aborted) throw new TokenFetchError(`${where}: no answer within the send timeout`);
      throw new TokenFetchError(`${where}: ${(err as Error).message}`, err instanceof EgressDenied);
    }
    let json: Record<string, unknown> | undefined;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    if (status !== 200) {
      // Only the OAuth error fields (RFC 6749 section 5.2) are repeated, never the rest of
      // the answer, each cut short: the token endpoint is the config owner's to choose.
      const oauthError =
        json && typeof json.error === "string"
          ? `: ${json.error.slice(0, 64)}${typeof json.error_description === "string" ? ` (${json.error_description.slice(0, 200)})` : ""}`
          : "";
      throw new TokenFetchError(`${where} answered HTTP ${status}${oauthError}`);
    }
    const token = json?.access_token;
    if (typeof token !== "string" || token === "")
      throw new TokenFetchError(`${where} answered 200 without an access_token in a JSON object`);
    if (json!.token_type !== undefined && String(json!.token_type).toLowerCase() !== "bearer")
      throw new TokenFetchError(
        `${where} gave a token of type ${JSON.stringify(json!.token_type)}, not Bearer`,
      );
    const expiresIn = Number(json!.expires_in);
    return {
      token,
      lifetimeMs: Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn * 1000 : DEFAULT_TOKEN_LIFETIME_MS,
    };
  }
}
