-- When a tenant got its current uid (docs/webhooks/security.md "Tenant claims"): a token
-- naming a tenant by uid is refused when it was issued before then, so a uid given up by
-- one tenant and taken by another never lets the first one's tokens into the second.
-- Existing tenants: since their creation (renames before this migration are not known).
ALTER TABLE "tenants" ADD COLUMN "uid_since" TIMESTAMPTZ(3);
UPDATE "tenants" SET "uid_since" = "created_at";
ALTER TABLE "tenants" ALTER COLUMN "uid_since" SET NOT NULL, ALTER COLUMN "uid_since" SET DEFAULT now();
