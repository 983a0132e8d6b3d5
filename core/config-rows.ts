// Config rows read in plain SQL on Prisma's own pool, in the shape of Prisma's Config: the
// configs API, the consumer (once per event) and the delivery activities (once per send)
// read them on nearly every call, and Prisma's query building and result mapping cost
// several times the pg round trip (~0.6 ms of CPU per query). A named statement is parsed
// and planned once per connection.

import type pg from "pg";
import type { Config } from "../generated/prisma/client.js";
import { DEFAULT_TENANT_ID, UUID_SHAPE } from "./tenant-rows.js";

/** Config columns under Prisma's field names, of the table or of its alias `table`. */
export const configColumns = (table = "") =>
  [
    ["id", "id"],
    ["name", "name"],
    ["endpoint", "endpoint"],
    ["event_types", "eventTypes"],
    ["secret", "secret"],
    ["previous_secret", "previousSecret"],
    ["previous_secret_expires_at", "previousSecretExpiresAt"],
    ["active", "active"],
    ["tenant_id", "tenantId"],
    ["filter", "filter"],
    ["deactivated_reason", "deactivatedReason"],
    ["deactivated_at", "deactivatedAt"],
    ["activated_at", "activatedAt"],
    ["ordering", "ordering"],
    ["batch", "batch"],
    ["signature_headers", "signatureHeaders"],
    ["max_concurrency", "maxConcurrency"],
    ["destination", "destination"],
    ["created_at", "createdAt"],
    ["updated_at", "updatedAt"],
  ]
    .map(([column, field]) => `${table ? `${table}.` : ""}${column} AS "${field}"`)
    .join(", ");

export const CONFIG_COLUMNS = configColumns();

/** The config with this id, or null (`id` must be a UUID: PostgreSQL refuses anything else). */
export async function findConfig(pool: pg.Pool, id: string): Promise<Config | null> {
  const { rows } = await pool.query<Config>({
    name: "configs-find",
    text: `SELECT ${CONFIG_COLUMNS} FROM configs WHERE id = $1::uuid`,
    values: [id],
  });
  return rows[0] ?? null;
}

/**
 * The active configs of the tenant (the default tenant unless named) subscribed to any of
 * `subscriptions` (event types or their patterns).
 */
export async function findActiveConfigs(
  pool: pg.Pool,
  subscriptions: string[],
  tenantId: string = DEFAULT_TENANT_ID,
): Promise<Config[]> {
  const { rows } = await pool.query<Config>({
    name: "configs-active-matching",
    text: `SELECT ${CONFIG_COLUMNS} FROM configs WHERE active AND event_types && $1::text[] AND tenant_id = $2::uuid`,
    values: [subscriptions, tenantId],
  });
  return rows;
}

const TENANT_CONFIG_COLUMNS = configColumns("c");

/**
 * The tenant an event names (its id, or its uid) and its active configs subscribed to any
 * of `subscriptions`, in one round trip: null when no such tenant exists.
 */
export async function findTenantConfigs(
  pool: pg.Pool,
  subscriptions: string[],
  tenant: string,
): Promise<{ tenantId: string; configs: Config[] } | null> {
  const byId = UUID_SHAPE.test(tenant);
  const { rows } = await pool.query<Config & { matchedTenant: string }>({
    name: byId ? "configs-active-matching-tenant-id" : "configs-active-matching-tenant-uid",
    text: `SELECT t.id AS "matchedTenant", ${TENANT_CONFIG_COLUMNS} FROM tenants t
      LEFT JOIN configs c ON c.tenant_id = t.id AND c.active AND c.event_types && $1::text[]
      WHERE ${byId ? "t.id = $2::uuid" : "t.uid = $2"}`,
    values: [subscriptions, tenant],
  });
  if (rows.length === 0) return null;
  const tenantId = rows[0]!.matchedTenant;
  const configs = rows
    .filter((r) => r.id !== null)
    .map(({ matchedTenant: _, ...config }) => config as Config);
  return { tenantId, configs };
}
