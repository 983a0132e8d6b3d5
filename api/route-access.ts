import { type RequestHandler, Router } from "express";
import type pg from "pg";
import type { AuthOptions } from "../core/options.js";
import { UUID_SHAPE } from "../core/tenant-rows.js";
import { ApiError, notFound } from "./errors.js";
import { portalSessionOf } from "./portal-auth.js";
import type { PortalFeature } from "./portal-features.js";
import { loadTenant, tenantOwning, tenantScopeOf } from "./tenant-scope.js";

// Who may call what, decided from the route that matched, never from the request's path:
// every API route is registered through RouteAccess.router(), which puts the route's rule in
// front of its handlers and refuses to register a route the table does not classify.
// Routing is case-sensitive and strict, so `/CONFIGS/x/secret` or `/configs/x/secret/`
// match no route at all (404) instead of a route whose rule was looked up differently.

/** The token scope a route needs (portal sessions have features instead). */
export type Scope = "read" | "write";

/**
 * What a tenant-scoped caller (a JWT with the tenant claim, or a portal session) may reach:
 * - config, webhook, dead-letter: the resource of the route's id must be its tenant's (404 otherwise);
 * - tenant: `/tenants/{tenant}` must be its own (404 otherwise);
 * - own-tenant-read-only: as tenant, and then 403 (it may read its tenant, not change it);
 * - answers-scoped: the handler narrows what it reads or writes to the caller's tenant;
 * - deployment: spans tenants, 403.
 */
export type TenantRule =
  | "config"
  | "webhook"
  | "dead-letter"
  | "tenant"
  | "own-tenant-read-only"
  | "answers-scoped"
  | "deployment";

export interface RouteRule {
  scope: Scope;
  tenant: TenantRule;
  /** The portal feature that grants the route ("session": every session); absent: 403 for portal sessions. */
  portal?: PortalFeature | "session";
}

type Method = "get" | "post" | "put" | "patch" | "delete";
const METHODS: Method[] = ["get", "post", "put", "patch", "delete"];

/** Every API route, keyed "METHOD /path" with the OpenAPI document's path spelling. */
export const ROUTE_RULES: Record<string, RouteRule> = {
  "GET /configs": { scope: "read", tenant: "answers-scoped", portal: "endpoints" },
  "POST /configs": { scope: "write", tenant: "answers-scoped", portal: "endpoints" },
  "GET /configs/{id}": { scope: "read", tenant: "config", portal: "endpoints" },
  "PUT /configs/{id}": { scope: "write", tenant: "config", portal: "endpoints" },
  "DELETE /configs/{id}": { scope: "write", tenant: "config", portal: "endpoints" },
  "PUT /configs/{id}/activate": { scope: "write", tenant: "config", portal: "endpoints" },
  "PUT /configs/{id}/deactivate": { scope: "write", tenant: "config", portal: "endpoints" },
  "GET /configs/{id}/stats": { scope: "read", tenant: "config", portal: "endpoints" },
  "GET /configs/{id}/ordering-keys": { scope: "read", tenant: "config" },
  "POST /configs/{id}/ordering-keys/{key}/skip": { scope: "write", tenant: "config" },
  "POST /configs/{id}/recover": { scope: "write", tenant: "config", portal: "recovery" },
  "GET /configs/{id}/recoveries": { scope: "read", tenant: "config", portal: "recovery" },
  "GET /configs/{id}/recoveries/{recoveryId}": { scope: "read", tenant: "config", portal: "recovery" },
  // The secret in clear lets its holder sign deliveries: as much power as changing the config.
  "GET /configs/{id}/secret": { scope: "write", tenant: "config", portal: "secrets" },
  "PUT /configs/{id}/secret/change": { scope: "write", tenant: "config", portal: "secrets" },
  "GET /configs/{id}/auth": { scope: "read", tenant: "config", portal: "endpoints" },
  "PATCH /configs/{id}/auth": { scope: "write", tenant: "config", portal: "endpoints" },
  "DELETE /configs/{id}/auth": { scope: "write", tenant: "config", portal: "endpoints" },
  // A test delivery is a side effect: write scope, also on the deprecated GET.
  "POST /configs/{id}/test": { scope: "write", tenant: "config", portal: "test-events" },
  "GET /configs/{id}/test": { scope: "write", tenant: "config", portal: "test-events" },
  "GET /configs/{id}/attempts": { scope: "read", tenant: "config", portal: "deliveries" },
  "GET /configs/{id}/deliveries": { scope: "read", tenant: "config", portal: "deliveries" },
  "GET /webhooks/{webhookId}": { scope: "read", tenant: "webhook", portal: "deliveries" },
  "GET /webhooks/{webhookId}/attempts": { scope: "read", tenant: "webhook", portal: "deliveries" },
  "POST /webhooks/{webhookId}/replay": { scope: "write", tenant: "webhook", portal: "replay" },
  "POST /webhooks/{webhookId}/cancel": { scope: "write", tenant: "webhook", portal: "replay" },
  "GET /tenants": { scope: "read", tenant: "deployment" },
  "POST /tenants": { scope: "write", tenant: "deployment" },
  "GET /tenants/{tenant}": { scope: "read", tenant: "tenant", portal: "endpoints" },
  "PATCH /tenants/{tenant}": { scope: "write", tenant: "own-tenant-read-only" },
  "DELETE /tenants/{tenant}": { scope: "write", tenant: "own-tenant-read-only" },
  "GET /tenants/{tenant}/configs": { scope: "read", tenant: "tenant", portal: "endpoints" },
  "POST /tenants/{tenant}/portal-sessions": { scope: "write", tenant: "tenant" },
  "GET /tenants/{tenant}/portal-sessions": { scope: "read", tenant: "tenant" },
  "DELETE /tenants/{tenant}/portal-sessions/{id}": { scope: "write", tenant: "tenant" },
  // Answers portal sessions only; a JWT gets its 401 from the handler.
  "GET /portal-sessions/current": { scope: "read", tenant: "answers-scoped", portal: "session" },
  "POST /events": { scope: "write", tenant: "answers-scoped" },
  "GET /dead-letters": { scope: "read", tenant: "answers-scoped" },
  "GET /dead-letters/{id}": { scope: "read", tenant: "dead-letter" },
  "DELETE /dead-letters/{id}": { scope: "write", tenant: "dead-letter" },
  "POST /dead-letters/{id}/replay": { scope: "write", tenant: "dead-letter" },
  "GET /event-types": { scope: "read", tenant: "answers-scoped", portal: "endpoints" },
  "GET /event-types/{name}": { scope: "read", tenant: "answers-scoped", portal: "endpoints" },
  "PUT /event-types/{name}": { scope: "write", tenant: "deployment" },
  "DELETE /event-types/{name}": { scope: "write", tenant: "deployment" },
};

/** "/configs/:id" → "/configs/{id}": the route table and the OpenAPI document share one spelling. */
export const openapiPath = (expressPath: string) => expressPath.replace(/:(\w+)/g, "{$1}");

const forbidden = (message: string) => new ApiError(403, "FORBIDDEN", message);

/** The checks every API route runs once it matched: scope, tenant, portal feature. */
export class RouteAccess {
  constructor(
    private readonly pool: pg.Pool,
    private readonly auth: AuthOptions | undefined,
  ) {}

  /** The guard of one route; throws at registration when the table lacks the route. */
  guard(method: Method, expressPath: string): RequestHandler {
    const key = `${method.toUpperCase()} ${openapiPath(expressPath)}`;
    const rule = ROUTE_RULES[key];
    if (!rule) throw new Error(`route ${key} has no rule in api/route-access.ts: classify it first`);
    return async (req, res, next) => {
      const portal = portalSessionOf(res);
      if (!portal && this.auth) this.checkScope(rule.scope, res.locals.scopes as Set<string> | undefined);
      if (tenantScopeOf(res)) await this.checkTenant(rule.tenant, key, req.params, res);
      if (portal && rule.portal !== "session") {
        if (!rule.portal) throw forbidden(`a portal session cannot call ${key}`);
        if (!portal.features.includes(rule.portal))
          throw forbidden(`this portal session lacks the feature "${rule.portal}", which ${key} needs`);
      }
      next();
    };
  }

  private checkScope(scope: Scope, held: Set<string> | undefined): void {
    const auth = this.auth!;
    if (held?.has(auth.writeScope) || (scope === "read" && held?.has(auth.readScope))) return;
    throw forbidden(`token lacks the scope ${scope === "read" ? auth.readScope : auth.writeScope}`);
  }

  private async checkTenant(
    rule: TenantRule,
    key: string,
    params: Record<string, string | string[]>,
    res: Parameters<RequestHandler>[1],
  ): Promise<void> {
    const scope = tenantScopeOf(res)!;
    switch (rule) {
      case "answers-scoped":
        return;
      case "deployment":
        throw forbidden(
          `a tenant-scoped caller cannot call ${key} (deployment-wide): it needs a token without a tenant claim`,
        );
      case "tenant":
        await loadTenant(this.pool, res, String(params.tenant));
        return;
      case "own-tenant-read-only":
        await loadTenant(this.pool, res, String(params.tenant));
        throw forbidden(`a tenant-scoped caller cannot call ${key}: it may read its tenant, not change it`);
      default: {
        const id = String(rule === "webhook" ? params.webhookId : params.id);
        if (!UUID_SHAPE.test(id) || (await tenantOwning(this.pool, rule, id)) !== scope.id)
          throw notFound(`${rule.replace("-", " ")} ${id} not found`);
      }
    }
  }

  /**
   * A router whose routes match case-sensitively and strictly, each behind its rule.
   * Only get/post/put/patch/delete register routes here (all() and use() would bypass the table).
   */
  router(): Router {
    const r = Router({ caseSensitive: true, strict: true });
    for (const method of METHODS) {
      const register = r[method].bind(r) as (path: string, ...handlers: RequestHandler[]) => Router;
      Object.assign(r, {
        [method]: (path: string, ...handlers: RequestHandler[]) =>
          register(path, this.guard(method, path), ...handlers),
      });
    }
    return r;
  }
}
