import type { RequestHandler } from "express";
import { createRemoteJWKSet, errors, jwtVerify } from "jose";
import type { AuthOptions } from "../core/options.js";
import { ApiError } from "./errors.js";

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
 * issuer and audience when set). This only authenticates: the scopes (from `scope`,
 * space-separated, or `scp`, an array) land in res.locals.scopes, and the route that
 * matches decides what they allow (api/route-access.ts). The subject lands in
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
      // A uid claim is bound to the tenant that held the uid when the token was issued.
      res.locals.tokenIssuedAt = typeof payload.iat === "number" ? payload.iat : undefined;
    }
    const scopes = new Set([
      ...(typeof payload.scope === "string" ? payload.scope.split(" ") : []),
      ...(Array.isArray(payload.scp) ? payload.scp.map(String) : []),
    ]);
    if (opts.requireTenantClaim && tenant === undefined && !scopes.has(opts.adminScope))
      throw new ApiError(
        403,
        "FORBIDDEN",
        `token has no "${opts.tenantClaim}" claim and lacks the scope ${opts.adminScope}: deployment-wide tokens need it (--auth-require-tenant-claim)`,
      );
    res.locals.scopes = scopes;
    res.removeHeader("WWW-Authenticate");
    next();
  };
}
