-- "updated_at" moves on every UPDATE of a config or an attempt, whichever path
-- writes (the webhooks API, the entity server, the delivery worker, plain SQL).
-- A writer that sets "updated_at" itself keeps its value: the webhooks API and
-- the attempts store stamp their own writes, and an operator may backdate a row.
CREATE FUNCTION "refresh_updated_at"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW."updated_at" IS NOT DISTINCT FROM OLD."updated_at" THEN
        NEW."updated_at" := now();
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER "configs_refresh_updated_at" BEFORE UPDATE ON "configs"
    FOR EACH ROW EXECUTE FUNCTION "refresh_updated_at"();
CREATE TRIGGER "attempts_refresh_updated_at" BEFORE UPDATE ON "attempts"
    FOR EACH ROW EXECUTE FUNCTION "refresh_updated_at"();
