-- Tenants (api/tenant-routes.ts): every config belongs to exactly one. The built-in
-- default tenant has the nil UUID and the uid "default"; every config that existed
-- before this migration, and every config created without a tenant, is the default
-- tenant's, so single-tenant deployments and the Formance-compatible routes work as
-- before. Deleting a tenant deletes its configs first (the API does it, closing their
-- deliveries), so the foreign key restricts instead of cascading.
CREATE TABLE "tenants" (
    "id" UUID NOT NULL,
    "uid" TEXT NOT NULL,
    "name" TEXT NOT NULL DEFAULT '',
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "tenants_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "tenants_uid_key" ON "tenants"("uid");
CREATE INDEX "tenants_created_at_id_idx" ON "tenants"("created_at", "id");

INSERT INTO "tenants" ("id", "uid", "name")
VALUES ('00000000-0000-0000-0000-000000000000', 'default', 'Default tenant');

-- A constant default: PostgreSQL 11+ adds the column without rewriting the table.
ALTER TABLE "configs" ADD COLUMN "tenant_id" UUID NOT NULL DEFAULT '00000000-0000-0000-0000-000000000000';
ALTER TABLE "configs" ADD CONSTRAINT "configs_tenant_id_fkey"
    FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE RESTRICT;
CREATE INDEX "configs_tenant_id_updated_at_idx" ON "configs"("tenant_id", "updated_at");

-- The tenant of a dead letter's event (of its config when it names one); null when the
-- message did not parse or named a tenant that does not exist: only tokens without a
-- tenant claim see those.
ALTER TABLE "dead_letters" ADD COLUMN "tenant_id" UUID;
CREATE INDEX "dead_letters_tenant_id_created_at_idx" ON "dead_letters"("tenant_id", "created_at");
