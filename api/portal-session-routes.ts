import { randomUUID } from "node:crypto";
import type { Request, Router } from "express";
import type pg from "pg";
import { parseDuration } from "../common/duration.js";
import type { PortalOptions } from "../core/options.js";
import { ApiError, notFound, unavailable, validation } from "./errors.js";
import { portalSessionOf } from "./portal-auth.js";
import { DEFAULT_PORTAL_FEATURES } from "./portal-features.js";
import {
  insertSession,
  liveSessions,
  type PortalTheme,
  revokeSession,
  sessionJson,
} from "./portal-session-store.js";
import type { PortalTokens } from "./portal-token.js";
import type { RouteAccess } from "./route-access.js";
import { cursorJson } from "./serialize.js";
import type { TenantQuotas } from "./tenant-quotas.js";
import { loadTenant } from "./tenant-scope.js";
import { allowQuery, check, jsonBody, UUID_RE } from "./validation.js";

// Consumer portal sessions: created by the team's backend (write scope) for one tenant,
// listed and revoked there; the page bootstraps from GET /portal-sessions/current.

export const DEFAULT_SESSION_MS = 3_600_000;
export const MAX_SESSION_MS = 24 * 3_600_000;

interface PortalSessionUser {
  expiresIn?: string;
  features?: string[];
  theme?: PortalTheme;
}

/** The session's lifetime in ms: a Go duration from 1s to 24h, whole seconds (the token's exp is). */
function lifetime(expiresIn: string | undefined): number {
  if (expiresIn === undefined) return DEFAULT_SESSION_MS;
  let ms: number;
  try {
    ms = parseDuration(expiresIn);
  } catch (err) {
    throw validation(`expiresIn: ${(err as Error).message}`);
  }
  if (!(ms >= 1000 && ms <= MAX_SESSION_MS) || ms % 1000 !== 0)
    throw validation(`expiresIn must be whole seconds from 1s to 24h, got "${expiresIn}"`);
  return ms;
}

function checkLogo(logoUrl: string, hosts: string[]): void {
  let url: URL;
  try {
    url = new URL(logoUrl);
  } catch {
    throw validation("theme.logoUrl must be an absolute https URL");
  }
  if (url.protocol !== "https:") throw validation("theme.logoUrl must be an https URL");
  if (!hosts.includes(url.host))
    throw validation(
      `theme.logoUrl: host ${JSON.stringify(url.host)} is not in --portal-logo-hosts (${hosts.length ? hosts.join(", ") : "none allowed"})`,
    );
}

/** Where the page is, with the token in the fragment: never sent to a server, nor in a Referer. */
function sessionUrl(req: Request, opts: PortalOptions, token: string): string {
  const base = opts.baseUrl ?? `${req.protocol}://${req.get("host")}`;
  return `${base}/portal/#token=${token}`;
}

/** How sessions are made: the portal's options, whether sessions may be minted here, the tenant's quota. */
interface SessionMaking extends PortalOptions {
  /**
   * False when authentication is off and the API listens beyond loopback
   * (--insecure-no-auth): a session is a credential handed to a tenant's user, and nobody
   * should mint one over the network from an API that checks no token.
   */
  mintable: boolean;
  quotas: TenantQuotas;
}

export function portalSessionRoutes(
  access: RouteAccess,
  pool: pg.Pool,
  tokens: PortalTokens,
  opts: SessionMaking,
): Router {
  const r = access.router();

  r.post(
    "/tenants/:tenant/portal-sessions",
    allowQuery(),
    jsonBody({ required: false }),
    async (req, res) => {
      if (!opts.mintable)
        throw new ApiError(
          403,
          "FORBIDDEN",
          "portal sessions are not created while authentication is off on a listen address beyond loopback (--auth-jwks-url turns it on)",
        );
      const tenant = await loadTenant(pool, res, String(req.params.tenant));
      const body = check<PortalSessionUser>("PortalSessionUser", req.body ?? {});
      await opts.quotas.portalSession(tenant.id);
      const ms = lifetime(body.expiresIn);
      if (body.theme?.logoUrl !== undefined) checkLogo(body.theme.logoUrl, opts.logoHosts);
      if (tokens.unavailable) throw unavailable(tokens.unavailable);
      const exp = Math.floor((Date.now() + ms) / 1000);
      const session = await insertSession(pool, {
        id: randomUUID(),
        tenantId: tenant.id,
        features: body.features ?? DEFAULT_PORTAL_FEATURES,
        theme: body.theme ?? {},
        createdBy: (res.locals.subject as string | undefined) ?? null,
        expiresAt: new Date(exp * 1000),
      });
      const token = await tokens.sign({
        sessionId: session.id,
        tenantId: tenant.id,
        features: session.features,
        exp,
      });
      res.status(201).json({ ...sessionJson(session), url: sessionUrl(req, opts, token), token });
    },
  );

  r.get("/tenants/:tenant/portal-sessions", allowQuery(), async (req, res) => {
    const tenant = await loadTenant(pool, res, String(req.params.tenant));
    res.json(cursorJson((await liveSessions(pool, tenant.id)).map(sessionJson)));
  });

  r.delete("/tenants/:tenant/portal-sessions/:id", allowQuery(), async (req, res) => {
    const tenant = await loadTenant(pool, res, String(req.params.tenant));
    const id = String(req.params.id);
    if (!UUID_RE.test(id) || !(await revokeSession(pool, tenant.id, id)))
      throw notFound(`portal session ${id} not found`);
    res.status(204).end();
  });

  r.get("/portal-sessions/current", allowQuery(), (_req, res) => {
    const session = portalSessionOf(res);
    if (!session)
      throw new ApiError(
        401,
        "UNAUTHORIZED",
        "this route answers a portal session token (Authorization: Bearer)",
      );
    const tenant = res.locals.tenant as { id: string; uid: string; name: string };
    res.json({
      id: session.id,
      tenant: { id: tenant.id, uid: tenant.uid, name: tenant.name },
      features: session.features,
      theme: session.theme,
      expiresAt: session.expiresAt.toISOString(),
    });
  });

  return r;
}
