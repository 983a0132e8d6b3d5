import { type RequestHandler, Router } from "express";
import type pg from "pg";
import { ApiError } from "./errors.js";
import { portalSessionOf } from "./portal-auth.js";
import { loadTenant } from "./tenant-scope.js";

// What a portal session may call: each route the page uses, with the feature that grants
// it. Anything not in the table (tenant writes and lists, events, dead letters, the event
// catalog's writes, portal sessions themselves, routes added later) is 403 for a portal
// token. Mounted after api/tenant-scope.ts's guards, so another tenant's ids are 404 first.

export const PORTAL_FEATURES = [
  "endpoints",
  "deliveries",
  "replay",
  "recovery",
  "test-events",
  "secrets",
] as const;
export type PortalFeature = (typeof PORTAL_FEATURES)[number];

type Method = "get" | "post" | "put" | "patch" | "delete";

/** Route → feature; "session" is every portal session's own (its bootstrap). */
export const PORTAL_ROUTES: [Method, string, PortalFeature | "session"][] = [
  ["get", "/portal-sessions/current", "session"],
  ["get", "/tenants/:tenant", "endpoints"],
  ["get", "/tenants/:tenant/configs", "endpoints"],
  ["get", "/event-types", "endpoints"],
  ["get", "/event-types/:name", "endpoints"],
  ["get", "/configs", "endpoints"],
  ["post", "/configs", "endpoints"],
  ["get", "/configs/:id", "endpoints"],
  ["put", "/configs/:id", "endpoints"],
  ["delete", "/configs/:id", "endpoints"],
  ["put", "/configs/:id/activate", "endpoints"],
  ["put", "/configs/:id/deactivate", "endpoints"],
  ["get", "/configs/:id/stats", "endpoints"],
  ["get", "/configs/:id/auth", "endpoints"],
  ["patch", "/configs/:id/auth", "endpoints"],
  ["delete", "/configs/:id/auth", "endpoints"],
  ["get", "/configs/:id/attempts", "deliveries"],
  ["get", "/configs/:id/deliveries", "deliveries"],
  ["get", "/webhooks/:webhookId", "deliveries"],
  ["get", "/webhooks/:webhookId/attempts", "deliveries"],
  ["post", "/webhooks/:webhookId/replay", "replay"],
  ["post", "/webhooks/:webhookId/cancel", "replay"],
  ["post", "/configs/:id/recover", "recovery"],
  ["get", "/configs/:id/recoveries", "recovery"],
  ["get", "/configs/:id/recoveries/:recoveryId", "recovery"],
  ["get", "/configs/:id/test", "test-events"],
  ["get", "/configs/:id/secret", "secrets"],
  ["put", "/configs/:id/secret/change", "secrets"],
];

export function portalFeatureGuard(pool: pg.Pool): Router {
  const r = Router();
  r.use((_req, res, next) => next(portalSessionOf(res) ? undefined : "router"));
  for (const [method, path, feature] of PORTAL_ROUTES) {
    const check: RequestHandler = (req, res, next) => {
      if (feature === "session" || portalSessionOf(res)!.features.includes(feature)) return next("router");
      throw new ApiError(
        403,
        "FORBIDDEN",
        `this portal session lacks the feature "${feature}", which ${req.method} ${req.path} needs`,
      );
    };
    r[method](path, check);
  }
  const denied = (method: string, path: string) =>
    new ApiError(403, "FORBIDDEN", `a portal session cannot call ${method} ${path}`);
  // Another tenant's /tenants/{tenant}/... stays a 404, as for tenant-scoped tokens.
  r.all("/tenants/:tenant{/*rest}", async (req, res) => {
    await loadTenant(pool, res, String(req.params.tenant));
    throw denied(req.method, req.path);
  });
  r.use((req) => {
    throw denied(req.method, req.path);
  });
  return r;
}
