import type { RequestHandler, Response } from "express";
import type pg from "pg";
import { DEFAULT_TENANT_ID, findTenant, type TenantRow, UUID_SHAPE } from "../core/tenant-rows.js";
import { ApiError, notFound } from "./errors.js";

// Tenant-scoped callers (a JWT carrying the --auth-tenant-claim claim, or a portal
// session): their tenant, and who owns a resource. Each route's rule in api/route-access.ts
// uses these: another tenant's resource answers 404 exactly as an unknown id does (no
// existence leak); a route that spans tenants answers 403. A token without the claim keeps
// the deployment-wide scopes. The table of routes is in docs/webhooks/tenants-and-portal.md#tenants.

/** The tenant a request's token is scoped to; undefined for deployment-wide tokens (or auth off). */
export const tenantScopeOf = (res: Response): TenantRow | undefined =>
  res.locals.tenant as TenantRow | undefined;

const forbidden = (what: string) =>
  new ApiError(
    403,
    "FORBIDDEN",
    `a tenant-scoped token cannot ${what}: it needs a token without a tenant claim`,
  );

/**
 * Resolves the token's tenant claim (api/auth.ts) to its tenant; a claim naming none is
 * refused. A claim naming a uid must come from a token issued (`iat`) once the tenant held
 * that uid: a uid renamed away and taken by another tenant never carries old tokens over.
 */
export function resolveTokenTenant(pool: pg.Pool): RequestHandler {
  return async (_req, res, next) => {
    const claim = res.locals.tenantClaim as string | undefined;
    if (claim === undefined) return next();
    const tenant = await findTenant(pool, claim);
    const named = JSON.stringify(claim.slice(0, 200));
    if (!tenant) throw forbidden(`be used: its tenant ${named} does not exist`);
    if (!UUID_SHAPE.test(claim)) {
      const iat = res.locals.tokenIssuedAt as number | undefined;
      if (iat === undefined)
        throw new ApiError(
          401,
          "UNAUTHORIZED",
          `the token names its tenant by uid ${named} without an "iat" claim: name the tenant by id, or add "iat"`,
        );
      if (iat < Math.floor(tenant.uidSince.getTime() / 1000))
        throw new ApiError(
          401,
          "UNAUTHORIZED",
          `the token was issued before its tenant got the uid ${named} (${tenant.uidSince.toISOString()}): issue a new token`,
        );
    }
    res.locals.tenant = tenant;
    next();
  };
}

/**
 * The tenant a `/tenants/{tenant}` path names (its id, or uid:<uid>), as the token may see
 * it: 404 when there is none, or when it is not the token's own.
 */
export async function loadTenant(pool: pg.Pool, res: Response, param: string): Promise<TenantRow> {
  const name = param.startsWith("uid:") ? param.slice(4) : UUID_SHAPE.test(param) ? param : undefined;
  const tenant = name ? await findTenant(pool, name) : null;
  const scope = tenantScopeOf(res);
  if (!tenant || (scope && scope.id !== tenant.id)) throw notFound(`tenant ${param} not found`);
  return tenant;
}

/** The tenant owning a delivery: its config's, else the one its attempt rows snapshotted (config deleted). */
async function webhookTenant(pool: pg.Pool, webhookId: string): Promise<string | null> {
  const { rows } = await pool.query<{ tenant: string | null }>({
    name: "webhook-tenant",
    text: `SELECT coalesce(c.tenant_id, (a.config->>'tenantId')::uuid, $2::uuid) AS tenant
        FROM (SELECT config_id, config FROM attempts WHERE webhook_id = $1::uuid LIMIT 1) a
        LEFT JOIN configs c ON c.id = a.config_id
      UNION ALL
      SELECT c.tenant_id FROM unsent_deliveries u JOIN configs c ON c.id = u.config_id
        WHERE u.webhook_id = $1::uuid
      LIMIT 1`,
    values: [webhookId, DEFAULT_TENANT_ID],
  });
  return rows[0]?.tenant ?? null;
}

async function tenantOfRow(pool: pg.Pool, table: "configs" | "dead_letters", id: string) {
  const { rows } = await pool.query<{ tenant: string | null }>({
    name: `${table}-tenant`,
    text: `SELECT tenant_id AS tenant FROM ${table} WHERE id = $1::uuid`,
    values: [id],
  });
  return rows[0]?.tenant ?? null;
}

/** The tenant owning a config, a delivery or a dead letter (by its UUID); null when there is none. */
export function tenantOwning(
  pool: pg.Pool,
  kind: "config" | "webhook" | "dead-letter",
  id: string,
): Promise<string | null> {
  if (kind === "webhook") return webhookTenant(pool, id);
  return tenantOfRow(pool, kind === "config" ? "configs" : "dead_letters", id);
}
