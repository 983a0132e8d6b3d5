import type { RequestHandler, Response } from "express";
import type pg from "pg";
import { UUID_SHAPE } from "../core/tenant-rows.js";
import { ApiError } from "./errors.js";
import { findSession, type PortalSessionRow } from "./portal-session-store.js";
import { isPortalToken, type PortalTokens } from "./portal-token.js";

// Requests carrying a portal session token (api/portal-token.ts): signature, expiry and
// revocation are checked on every request (one primary-key lookup), then the request is
// scoped to the session's tenant exactly like a tenant-scoped JWT (res.locals.tenant, read
// by api/tenant-scope.ts). Mounted before the JWT check, which lets these requests pass,
// so it works with --auth-jwks-url and without. Any other request goes on untouched.

/** The portal session a request runs under; undefined for every other caller. */
export const portalSessionOf = (res: Response): PortalSessionRow | undefined =>
  res.locals.portalSession as PortalSessionRow | undefined;

/** The audit trail's subject of a portal request. */
export const portalSubject = (sessionId: string) => `portal-session:${sessionId}`;

const refused = (code: "UNAUTHORIZED" | "SESSION_EXPIRED" | "SESSION_REVOKED", message: string) =>
  new ApiError(401, code, message);

export function portalAuth(pool: pg.Pool, tokens: PortalTokens): RequestHandler {
  return async (req, res, next) => {
    const [kind, token] = (req.headers.authorization ?? "").split(" ");
    if (kind?.toLowerCase() !== "bearer" || !token || !isPortalToken(token)) return next();
    res.setHeader("WWW-Authenticate", 'Bearer realm="webhooks-portal", error="invalid_token"');
    let sessionId: string;
    let tenantId: string | undefined;
    let expired = false;
    try {
      ({ sessionId, tenantId } = await tokens.verify(token));
    } catch (err) {
      const e = err as { expired?: boolean; sessionId?: string; message: string };
      if (!e.expired || !e.sessionId)
        throw refused("UNAUTHORIZED", `invalid portal session token: ${e.message}`);
      // A revocation says more than the expiry: look the session up all the same.
      sessionId = e.sessionId;
      expired = true;
    }
    const found = UUID_SHAPE.test(sessionId) ? await findSession(pool, sessionId) : null;
    // An expired session's row is pruned a week after its expiry: still "expired" then.
    if (!found && expired) throw refused("SESSION_EXPIRED", "the portal session has expired");
    if (!found || (tenantId !== undefined && found.tenant.id !== tenantId))
      throw refused("UNAUTHORIZED", "invalid portal session token: its session does not exist (any more)");
    const { session, tenant } = found;
    if (session.revokedAt)
      throw refused(
        "SESSION_REVOKED",
        `the portal session was revoked at ${session.revokedAt.toISOString()}`,
      );
    if (expired || session.expiresAt.getTime() <= Date.now())
      throw refused("SESSION_EXPIRED", `the portal session expired at ${session.expiresAt.toISOString()}`);
    res.removeHeader("WWW-Authenticate");
    res.locals.portalSession = session;
    res.locals.tenant = tenant;
    res.locals.subject = portalSubject(session.id);
    next();
  };
}
