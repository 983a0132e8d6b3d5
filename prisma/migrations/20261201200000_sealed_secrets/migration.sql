-- Signing secrets are sealed at rest (core/sealing.ts): "secret" and "previous_secret"
-- hold `sealed1.<key id>.<iv>.<ciphertext+tag>`, or a plain value written before this
-- version (or with --insecure-plaintext-secrets). SQL cannot seal them: the key is not
-- in the database. A serve or worker process with a key ring seals plain rows at
-- startup, and `webhooks secrets rekey` moves rows to the newest key (README, Secrets at rest).
COMMENT ON COLUMN "configs"."secret" IS 'sealed: sealed1.<key id>.<iv>.<ciphertext+tag>, bound to configs.secret:<id>; plain only before sealing or with --insecure-plaintext-secrets';
COMMENT ON COLUMN "configs"."previous_secret" IS 'sealed like secret, bound to configs.previous_secret:<id>';

-- Re-sealing changes how a secret is stored, not the config: "updated_at" (the list's
-- order, what clients see as the last change) moves on every other UPDATE that does not
-- set it, as before, but not on one that only rewrites the sealed columns.
CREATE FUNCTION "refresh_config_updated_at"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW."updated_at" IS NOT DISTINCT FROM OLD."updated_at"
       AND (to_jsonb(NEW) - 'secret' - 'previous_secret') IS DISTINCT FROM (to_jsonb(OLD) - 'secret' - 'previous_secret') THEN
        NEW."updated_at" := now();
    END IF;
    RETURN NEW;
END
$$;

DROP TRIGGER "configs_refresh_updated_at" ON "configs";
CREATE TRIGGER "configs_refresh_updated_at" BEFORE UPDATE ON "configs"
    FOR EACH ROW EXECUTE FUNCTION "refresh_config_updated_at"();

-- The configs still holding a plain secret: none, once sealed. Processes with a key ring
-- look here every reconciliation tick to seal what another writer (plain SQL, the entity
-- server) stored in plain text; the partial index keeps that look at an empty index.
CREATE INDEX "configs_plain_secrets" ON "configs" ("id")
    WHERE left("secret", 8) <> 'sealed1.' OR left("previous_secret", 8) <> 'sealed1.';
-- Without statistics on those expressions the planner guesses most rows match and scans
-- the table; with them it knows none do and reads the (empty) index.
CREATE STATISTICS "configs_secret_kinds" ON (left("secret", 8)), (left("previous_secret", 8)) FROM "configs";
