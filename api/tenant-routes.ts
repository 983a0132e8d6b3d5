import { randomUUID } from "node:crypto";
import type { Router } from "express";
import type pg from "pg";
import { inTransaction } from "../common/db/transaction.js";
import { CONFIG_COLUMNS } from "../core/config-rows.js";
import { DEFAULT_TENANT_ID, TENANT_COLUMNS, type TenantRow } from "../core/tenant-rows.js";
import type { Config } from "../generated/prisma/client.js";
import type { DeliveryControl } from "./delivery-control.js";
import { ApiError, notFound, validation } from "./errors.js";
import { pageOf, readPage } from "./paging.js";
import { portalSessionOf } from "./portal-auth.js";
import type { RouteAccess } from "./route-access.js";
import { configJson, cursorJson } from "./serialize.js";
import { loadTenant } from "./tenant-scope.js";
import { allowQuery, check, jsonBody } from "./validation.js";

/** Largest tenant metadata, as JSON: labels and references, not documents. */
export const MAX_TENANT_METADATA_BYTES = 4096;
const DEFAULT_PAGE = 100;

interface TenantUser {
  uid?: string;
  name?: string;
  metadata?: Record<string, unknown>;
}

export function tenantJson(t: TenantRow) {
  return {
    id: t.id,
    uid: t.uid,
    name: t.name,
    metadata: t.metadata,
    createdAt: t.createdAt.toISOString(),
    updatedAt: t.updatedAt.toISOString(),
  };
}

function readTenantUser(body: unknown): TenantUser {
  const t = check<TenantUser>("TenantUser", body);
  if (t.metadata !== undefined) {
    const bytes = Buffer.byteLength(JSON.stringify(t.metadata));
    if (bytes > MAX_TENANT_METADATA_BYTES) {
      throw validation(`metadata must be at most ${MAX_TENANT_METADATA_BYTES} bytes as JSON, got ${bytes}`);
    }
  }
  return t;
}

const uidTaken = (uid: string) =>
  new ApiError(409, "CONFLICT", `a tenant with uid ${JSON.stringify(uid)} exists`);
const isUniqueViolation = (err: unknown) => (err as { code?: string }).code === "23505";

/** Tenants: the customers of the deployment, each owning its configs (docs/webhooks/tenants-and-portal.md#tenants). */
export function tenantRoutes(access: RouteAccess, pool: pg.Pool, deliveries: DeliveryControl): Router {
  const r = access.router();
  listRoute(r, pool);
  createRoute(r, pool);
  readRoute(r, pool);
  updateRoute(r, pool);
  deleteRoute(r, pool, deliveries);
  configsRoute(r, pool);
  return r;
}

/** GET /tenants: a page, or the tenant of a uid. */
function listRoute(r: Router, pool: pg.Pool): void {
  r.get("/tenants", allowQuery("uid", "pageSize", "cursor"), async (req, res) => {
    const page = readPage(req.query, DEFAULT_PAGE)!;
    const uid = req.query.uid as string | undefined;
    const values: unknown[] = [page.pageSize + 1];
    const where: string[] = [];
    if (uid !== undefined) {
      values.push(uid);
      where.push(`uid = $${values.length}`);
    }
    if (page.after) {
      values.push(page.after.at, page.after.id);
      where.push(`(created_at, id) < ($${values.length - 1}, $${values.length}::uuid)`);
    }
    const { rows } = await pool.query<TenantRow>(
      `SELECT ${TENANT_COLUMNS} FROM tenants ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
       ORDER BY created_at DESC, id DESC LIMIT $1`,
      values,
    );
    const { items, next } = pageOf(rows, page, (t) => t.createdAt);
    res.json(cursorJson(items.map(tenantJson), { pageSize: page.pageSize, next }));
  });
}

/** POST /tenants: a new tenant; its uid is unique. */
function createRoute(r: Router, pool: pg.Pool): void {
  r.post("/tenants", allowQuery(), jsonBody({ required: true }), async (req, res) => {
    const t = readTenantUser(req.body);
    if (t.uid === undefined)
      throw validation('uid is required: the caller\'s own id of the tenant, e.g. "acme"');
    try {
      const { rows } = await pool.query<TenantRow>(
        `INSERT INTO tenants (id, uid, name, metadata, created_at, updated_at)
         VALUES ($1::uuid, $2, $3, $4::jsonb, now(), now()) RETURNING ${TENANT_COLUMNS}`,
        [randomUUID(), t.uid, t.name ?? "", JSON.stringify(t.metadata ?? {})],
      );
      res.json({ data: tenantJson(rows[0]!) });
    } catch (err) {
      if (isUniqueViolation(err)) throw uidTaken(t.uid);
      throw err;
    }
  });
}

/** GET /tenants/{tenant}, by id or uid. */
function readRoute(r: Router, pool: pg.Pool): void {
  r.get("/tenants/:tenant", allowQuery(), async (req, res) => {
    const tenant = tenantJson(await loadTenant(pool, res, String(req.params.tenant)));
    // The operator's metadata (plans, billing references) is not the tenant's users' to read.
    if (portalSessionOf(res)) {
      const { metadata: _operators, ...shown } = tenant;
      return res.json({ data: shown });
    }
    res.json({ data: tenant });
  });
}

/** PATCH /tenants/{tenant}: uid, name and metadata; the default tenant keeps its uid. */
function updateRoute(r: Router, pool: pg.Pool): void {
  r.patch("/tenants/:tenant", allowQuery(), jsonBody({ required: true }), async (req, res) => {
    const t = readTenantUser(req.body);
    const current = await loadTenant(pool, res, String(req.params.tenant));
    if (current.id === DEFAULT_TENANT_ID && t.uid !== undefined && t.uid !== current.uid) {
      throw validation('uid of the default tenant cannot change: it stays "default"');
    }
    try {
      const { rows } = await pool.query<TenantRow>(
        `UPDATE tenants SET uid = coalesce($2, uid), name = coalesce($3, name),
           metadata = coalesce($4::jsonb, metadata), updated_at = now(),
           uid_since = CASE WHEN $2 IS NOT NULL AND $2 <> uid THEN now() ELSE uid_since END
         WHERE id = $1::uuid RETURNING ${TENANT_COLUMNS}`,
        [
          current.id,
          t.uid ?? null,
          t.name ?? null,
          t.metadata === undefined ? null : JSON.stringify(t.metadata),
        ],
      );
      if (!rows[0]) throw notFound(`tenant ${String(req.params.tenant)} not found`); // deleted meanwhile
      res.json({ data: tenantJson(rows[0]) });
    } catch (err) {
      if (isUniqueViolation(err)) throw uidTaken(t.uid!);
      throw err;
    }
  });
}

/** DELETE /tenants/{tenant}: the tenant and its configs, their deliveries told to close. */
function deleteRoute(r: Router, pool: pg.Pool, deliveries: DeliveryControl): void {
  r.delete("/tenants/:tenant", allowQuery(), async (req, res) => {
    const tenant = await loadTenant(pool, res, String(req.params.tenant));
    if (tenant.id === DEFAULT_TENANT_ID) {
      throw new ApiError(409, "CONFLICT", "the default tenant cannot be deleted");
    }
    // Configs and tenant in one transaction: a config created for the tenant meanwhile
    // makes the foreign key refuse the tenant's deletion instead of orphaning it.
    let configIds: string[];
    try {
      configIds = await inTransaction(pool, async (client) => {
        const { rows } = await client.query<{ id: string }>(
          "DELETE FROM configs WHERE tenant_id = $1::uuid RETURNING id",
          [tenant.id],
        );
        await client.query("DELETE FROM tenants WHERE id = $1::uuid", [tenant.id]);
        return rows.map((c) => c.id);
      });
    } catch (err) {
      if ((err as { code?: string }).code === "23503") {
        throw new ApiError(409, "CONFLICT", `a config was added to tenant ${tenant.id} meanwhile; try again`);
      }
      throw err;
    }
    // As DELETE /configs/{id} does for one config: its queued deliveries are told to close.
    let signalled = 0;
    for (const id of configIds)
      signalled += (await deliveries.closeConfigDeliveries(id, "tenant deleted")).signalled;
    res.json({
      data: { id: tenant.id, deleted: true, configsDeleted: configIds.length, deliveriesClosed: signalled },
    });
  });
}

/** GET /tenants/{tenant}/configs: the tenant's configs, all or a page. */
function configsRoute(r: Router, pool: pg.Pool): void {
  r.get("/tenants/:tenant/configs", allowQuery("pageSize", "cursor"), async (req, res) => {
    const tenant = await loadTenant(pool, res, String(req.params.tenant));
    const page = readPage(req.query, undefined);
    const values: unknown[] = [tenant.id];
    let after = "";
    if (page?.after) {
      values.push(page.after.at, page.after.id);
      after = "AND (updated_at, id) < ($2, $3::uuid)";
    }
    const limit = page ? `LIMIT ${page.pageSize + 1}` : "";
    const { rows } = await pool.query<Config>(
      `SELECT ${CONFIG_COLUMNS} FROM configs WHERE tenant_id = $1::uuid ${after}
       ORDER BY updated_at DESC, id DESC ${limit}`,
      values,
    );
    const { items, next } = pageOf(rows, page, (c) => c.updatedAt);
    res.json(
      cursorJson(
        items.map((c) => configJson(c)),
        page ? { pageSize: page.pageSize, next } : undefined,
      ),
    );
  });
}
