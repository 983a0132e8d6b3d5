import type { RequestHandler } from "express";
import { createRemoteJWKSet, errors, jwtVerify } from "jose";
import type { AuthOptions } from "../core/options.js";
import { ApiError } from "./errors.js";

/**
 * Reads that need the write scope: a config's secret in clear lets its holder sign
 * deliveries, which is as much power as changing the config (dashboards and read-only
 * tokens see configs with the secret masked).
 */
const WRITE_SCOPE_READS = /^\/configs\/[^/]+\/secret\/?$/;

const unauthorized = (message: string) => new ApiError(401, "UNAUTHORIZED", message);

function reason(err: unknown): string {
  if (err instanceof errors.JWTExpired) return "token expired";
  if (err instanceof errors.JWTClaimValidationFailed)
    return `token claim "${err.claim}" is not accepted: ${err.message}`;
  if (err instanceof errors.JWSSignatureVerificationFailed) return "token signature does not verify";
  if (err instanceof errors.JWKSNoMatchingKey) return "token signed by a key the JWKS does not hold";
  if (err instanceof errors.JWKSTimeout || err instanceof errors.JOSEError)
    return `invalid token: ${err.message}`;
  return `invalid token: ${(err as Error).message}`;
}

/**
 * OAuth 2.0 bearer tokens: JWTs verified against the JWKS (signature, expiry,
 * issuer and audience when set). Reads need the read scope (or the write
 * scope); everything else, and reading a secret, the write scope. Scopes come
 * from `scope` (space-separated) or `scp` (array). The subject lands in
 * res.locals for the audit, the tenant claim (--auth-tenant-claim) for
 * api/tenant-scope.ts.
 */
export function requireToken(opts: AuthOptions): RequestHandler {
  const jwks = createRemoteJWKSet(new URL(opts.jwksUrl));
  return async (req, res, next) => {
    // Verified by api/portal-auth.ts, which ran first.
    if (res.locals.portalSession) return next();
    res.setHeader("WWW-Authenticate", 'Bearer realm="webhooks"');
    const header = req.headers.authorization;
    if (!header) throw unauthorized("missing Authorization: Bearer token");
    const [kind, token] = header.split(" ");
    if (kind?.toLowerCase() !== "bearer" || !token)
      throw unauthorized('Authorization must be "Bearer <token>"');
    let payload: Awaited<ReturnType<typeof jwtVerify>>["payload"];
    try {
      ({ payload } = await jwtVerify(token, jwks, {
        ...(opts.issuer ? { issuer: opts.issuer } : {}),
        ...(opts.audience ? { audience: opts.audience } : {}),
      }));
    } catch (err) {
      throw unauthorized(reason(err));
    }
    res.locals.subject = payload.sub;
    const tenant = payload[opts.tenantClaim];
    if (tenant !== undefined) {
      if (typeof tenant !== "string" || tenant.trim() === "")
        throw unauthorized(`token claim "${opts.tenantClaim}" must name a tenant by id or uid`);
      // Resolved to the tenant by api/tenant-scope.ts, which scopes every route to it.
      res.locals.tenantClaim = tenant.trim();
    }
    const scopes = new Set([
      ...(typeof payload.scope === "string" ? payload.scope.split(" ") : []),
      ...(Array.isArray(payload.scp) ? payload.scp.map(String) : []),
    ]);
    const read = (req.method === "GET" || req.method === "HEAD") && !WRITE_SCOPE_READS.test(req.path);
    const allowed = scopes.has(opts.writeScope) || (read && scopes.has(opts.readScope));
    if (!allowed) {
      throw new ApiError(
        403,
        "FORBIDDEN",
        `token lacks the scope ${read ? opts.readScope : opts.writeScope}`,
      );
    }
    res.removeHeader("WWW-Authenticate");
    next();
  };
}
