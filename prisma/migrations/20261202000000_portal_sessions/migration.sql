-- Consumer portal sessions (api/portal-session-routes.ts): a short-lived, single-tenant
-- grant whose signed token the portal page carries. The token holds the session id; every
-- request looks the row up by primary key, so a revocation takes effect at once. Sessions
-- go with their tenant.
CREATE TABLE "portal_sessions" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "features" TEXT[] NOT NULL,
    "theme" JSONB NOT NULL DEFAULT '{}',
    "created_by" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "revoked_at" TIMESTAMPTZ(3),

    CONSTRAINT "portal_sessions_pkey" PRIMARY KEY ("id")
);

ALTER TABLE "portal_sessions" ADD CONSTRAINT "portal_sessions_tenant_id_fkey"
    FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE RESTRICT;
-- The tenant's sessions by expiry: its live list, and the pruning of long-expired rows.
CREATE INDEX "portal_sessions_tenant_id_expires_at_idx" ON "portal_sessions"("tenant_id", "expires_at");
