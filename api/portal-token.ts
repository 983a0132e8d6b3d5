import { createSecretKey, type KeyObject } from "node:crypto";
import { decodeProtectedHeader, errors, jwtVerify, SignJWT } from "jose";
import type { KeyRing } from "../core/sealing.js";

// Portal session tokens: HS256 JWTs whose key is derived (HKDF) from a key of the secrets
// key ring, named by `kid`. Every API process with the same key file signs and verifies
// the same tokens, and appending a key (`secrets new-key`) leaves tokens signed under the
// older one valid while the ring still holds it. `typ` tells them from operator JWTs.

export const PORTAL_TOKEN_TYPE = "portal+jwt";
const ISSUER = "webhooks-portal";
const PURPOSE = "portal-session-token";

export interface PortalClaims {
  /** The session id (portal_sessions.id). */
  sessionId: string;
  tenantId: string;
  features: string[];
  /** Expiry, seconds since the epoch. */
  exp: number;
}

/** Why a token is refused: expired (its signature good), or anything else. */
export class PortalTokenError extends Error {
  constructor(
    message: string,
    readonly expired: boolean,
    /** The session id of an expired token (its signature verified). */
    readonly sessionId?: string,
  ) {
    super(message);
  }
}

/** Whether a bearer token is meant as a portal token (its header says so; nothing verified). */
export function isPortalToken(token: string): boolean {
  try {
    return decodeProtectedHeader(token).typ === PORTAL_TOKEN_TYPE;
  } catch {
    return false;
  }
}

export class PortalTokens {
  /** Derived keys by ring key id: HKDF and key import once per key, not per request. */
  private readonly keys = new Map<string, KeyObject>();

  /** `ring` null (--insecure-plaintext-secrets): no key to sign with, so no sessions. */
  constructor(private readonly ring: KeyRing | null) {}

  private key(kid: string): KeyObject | undefined {
    const cached = this.keys.get(kid);
    if (cached) return cached;
    const bytes = this.ring?.derive(kid, PURPOSE);
    if (!bytes) return undefined;
    const key = createSecretKey(bytes);
    this.keys.set(kid, key);
    return key;
  }

  /** Why this process cannot sign or verify portal tokens; undefined when it can. */
  get unavailable(): string | undefined {
    return this.ring
      ? undefined
      : "portal sessions need the secrets key ring (their tokens are signed with a key derived from it), and this process runs with --insecure-plaintext-secrets: pass --secrets-key-file instead";
  }

  async sign(c: PortalClaims): Promise<string> {
    if (!this.ring) throw new Error(this.unavailable);
    const kid = this.ring.newestId;
    return new SignJWT({ tenant: c.tenantId, features: c.features })
      .setProtectedHeader({ alg: "HS256", typ: PORTAL_TOKEN_TYPE, kid })
      .setIssuer(ISSUER)
      .setAudience(ISSUER)
      .setSubject(c.sessionId)
      .setIssuedAt()
      .setExpirationTime(c.exp)
      .sign(this.key(kid)!);
  }

  /** The claims of a token this deployment signed; throws PortalTokenError otherwise. */
  async verify(token: string): Promise<PortalClaims> {
    if (!this.ring) throw new PortalTokenError(this.unavailable!, false);
    try {
      const { payload } = await jwtVerify(
        token,
        (header) => {
          const key = header.kid === undefined ? undefined : this.key(header.kid);
          if (!key) throw new PortalTokenError("signed under a key this deployment does not hold", false);
          return key;
        },
        { algorithms: ["HS256"], typ: PORTAL_TOKEN_TYPE, issuer: ISSUER, audience: ISSUER },
      );
      const { sub, tenant, features, exp } = payload;
      if (typeof sub !== "string" || typeof tenant !== "string" || !Array.isArray(features) || !exp)
        throw new PortalTokenError("its claims are not a portal session's", false);
      return { sessionId: sub, tenantId: tenant, features: features.map(String), exp };
    } catch (err) {
      if (err instanceof PortalTokenError) throw err;
      if (err instanceof errors.JWTExpired)
        throw new PortalTokenError("the portal session has expired", true, err.payload.sub);
      if (err instanceof errors.JWSSignatureVerificationFailed)
        throw new PortalTokenError("its signature does not verify", false);
      throw new PortalTokenError((err as Error).message, false);
    }
  }
}
