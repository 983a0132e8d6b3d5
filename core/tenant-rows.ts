// Tenants as the start path and the API read them (table tenants, migration
// 20261201300000). A tenant is named by its id (a UUID) or by its uid (the caller's own
// id of its customer, which may never be UUID-shaped, so either form is unambiguous).

import type pg from "pg";

/** The built-in tenant of every config created without one (and of every config older than tenants). */
export const DEFAULT_TENANT_ID = "00000000-0000-0000-0000-000000000000";
export const DEFAULT_TENANT_UID = "default";

export const UUID_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface TenantRow {
  id: string;
  uid: string;
  name: string;
  metadata: Record<string, unknown>;
  /** When it got its current uid (a token naming it by uid must be younger). */
  uidSince: Date;
  createdAt: Date;
  updatedAt: Date;
}

export const TENANT_COLUMNS = `id, uid, name, metadata, uid_since AS "uidSince", created_at AS "createdAt", updated_at AS "updatedAt"`;

/** The tenant named by its id or its uid, or null. */
export async function findTenant(pool: pg.Pool, idOrUid: string): Promise<TenantRow | null> {
  const byId = UUID_SHAPE.test(idOrUid);
  const { rows } = await pool.query<TenantRow>({
    name: byId ? "tenants-find-id" : "tenants-find-uid",
    text: `SELECT ${TENANT_COLUMNS} FROM tenants WHERE ${byId ? "id = $1::uuid" : "uid = $1"}`,
    values: [idOrUid],
  });
  return rows[0] ?? null;
}
