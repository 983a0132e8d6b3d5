import type pg from "pg";
import { TENANT_COLUMNS, type TenantRow } from "../core/tenant-rows.js";

// The rows of table portal_sessions (migration 20261202000000_portal_sessions).

export interface PortalTheme {
  brandColor?: string;
  logoUrl?: string;
}

export interface PortalSessionRow {
  id: string;
  tenantId: string;
  features: string[];
  theme: PortalTheme;
  createdBy: string | null;
  createdAt: Date;
  expiresAt: Date;
  revokedAt: Date | null;
}

const COLUMNS = `id, tenant_id AS "tenantId", features, theme, created_by AS "createdBy",
  created_at AS "createdAt", expires_at AS "expiresAt", revoked_at AS "revokedAt"`;

/** How long an expired or revoked session's row is kept (answers SESSION_EXPIRED, not UNAUTHORIZED). */
const KEPT_AFTER_EXPIRY = "7 days";

export function sessionJson(s: PortalSessionRow) {
  return {
    id: s.id,
    tenantId: s.tenantId,
    features: s.features,
    theme: s.theme,
    createdBy: s.createdBy,
    createdAt: s.createdAt.toISOString(),
    expiresAt: s.expiresAt.toISOString(),
  };
}

/** Stores a new session and drops the tenant's sessions long expired (so rows stay bounded). */
export async function insertSession(
  pool: pg.Pool,
  s: Omit<PortalSessionRow, "createdAt" | "revokedAt">,
): Promise<PortalSessionRow> {
  const { rows } = await pool.query<PortalSessionRow>({
    name: "portal-session-insert",
    text: `WITH pruned AS (
        DELETE FROM portal_sessions
         WHERE tenant_id = $2::uuid AND expires_at < now() - interval '${KEPT_AFTER_EXPIRY}')
      INSERT INTO portal_sessions (id, tenant_id, features, theme, created_by, expires_at)
      VALUES ($1::uuid, $2::uuid, $3::text[], $4::jsonb, $5, $6)
      RETURNING ${COLUMNS}`,
    values: [s.id, s.tenantId, s.features, JSON.stringify(s.theme), s.createdBy, s.expiresAt],
  });
  return rows[0]!;
}

/** A session with its tenant, by primary key: what every portal request checks. */
export async function findSession(
  pool: pg.Pool,
  id: string,
): Promise<{ session: PortalSessionRow; tenant: TenantRow } | null> {
  const { rows } = await pool.query<{ session: PortalSessionRow; tenant: TenantRow }>({
    name: "portal-session-find",
    text: `SELECT row_to_json(s) AS session, row_to_json(t) AS tenant
        FROM (SELECT ${COLUMNS} FROM portal_sessions WHERE id = $1::uuid) s,
        LATERAL (SELECT ${TENANT_COLUMNS} FROM tenants WHERE id = s."tenantId") t`,
    values: [id],
  });
  const row = rows[0];
  if (!row) return null;
  // row_to_json gives the timestamps as text.
  const { session, tenant } = row;
  return {
    session: {
      ...session,
      createdAt: new Date(session.createdAt),
      expiresAt: new Date(session.expiresAt),
      revokedAt: session.revokedAt === null ? null : new Date(session.revokedAt),
    },
    tenant: { ...tenant, createdAt: new Date(tenant.createdAt), updatedAt: new Date(tenant.updatedAt) },
  };
}

/** The tenant's sessions neither expired nor revoked, newest first. */
export async function liveSessions(pool: pg.Pool, tenantId: string): Promise<PortalSessionRow[]> {
  const { rows } = await pool.query<PortalSessionRow>({
    name: "portal-session-live",
    text: `SELECT ${COLUMNS} FROM portal_sessions
      WHERE tenant_id = $1::uuid AND expires_at > now() AND revoked_at IS NULL
      ORDER BY created_at DESC, id DESC`,
    values: [tenantId],
  });
  return rows;
}

/** Revokes the tenant's session `id` (a second revocation keeps the first time); false when it has none. */
export async function revokeSession(pool: pg.Pool, tenantId: string, id: string): Promise<boolean> {
  const { rowCount } = await pool.query({
    name: "portal-session-revoke",
    text: `UPDATE portal_sessions SET revoked_at = coalesce(revoked_at, now())
      WHERE id = $1::uuid AND tenant_id = $2::uuid`,
    values: [id, tenantId],
  });
  return rowCount === 1;
}
