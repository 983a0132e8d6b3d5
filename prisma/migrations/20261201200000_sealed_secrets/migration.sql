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
