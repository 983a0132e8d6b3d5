-- Which configs each list version changed, so an API instance holding the full
-- list applies the few rows written since its version instead of rendering all
-- of them again (api/config-list-cache.ts). The version row stays the single
-- point every writer locks, so versions are handed out in commit order and a
-- reader that sees version N sees every change up to N.
CREATE TABLE "config_list_changes" (
    "version" BIGINT NOT NULL,
    -- NULL: any config may have changed (TRUNCATE); readers render everything.
    "config_id" UUID
);

CREATE INDEX "config_list_changes_version_idx" ON "config_list_changes" ("version");

-- Kept for 1 000 versions: an instance further behind renders the whole list.
CREATE FUNCTION "log_config_list_change"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    v BIGINT;
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM 1 FROM new_rows LIMIT 1;
    ELSIF TG_OP = 'UPDATE' OR TG_OP = 'DELETE' THEN
        PERFORM 1 FROM old_rows LIMIT 1;
    END IF;
    -- A statement that wrote no row (an update of an unknown id) changes no version.
    IF TG_OP <> 'TRUNCATE' AND NOT FOUND THEN
        RETURN NULL;
    END IF;
    UPDATE "config_list_version" SET "version" = "version" + 1 RETURNING "version" INTO v;
    IF TG_OP = 'TRUNCATE' THEN
        INSERT INTO "config_list_changes" VALUES (v, NULL);
    ELSIF TG_OP = 'INSERT' THEN
        INSERT INTO "config_list_changes" SELECT v, "id" FROM new_rows;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO "config_list_changes" SELECT v, "id" FROM old_rows;
    ELSE
        INSERT INTO "config_list_changes"
            SELECT v, "id" FROM new_rows UNION SELECT v, "id" FROM old_rows;
    END IF;
    DELETE FROM "config_list_changes" WHERE "version" <= v - 1000;
    RETURN NULL;
END
$$;

DROP TRIGGER "configs_bump_list_version" ON "configs";
DROP FUNCTION "bump_config_list_version"();

-- Transition tables allow one event per trigger, hence three (plus TRUNCATE, which has none).
CREATE TRIGGER "configs_log_insert" AFTER INSERT ON "configs"
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION "log_config_list_change"();
CREATE TRIGGER "configs_log_update" AFTER UPDATE ON "configs"
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION "log_config_list_change"();
CREATE TRIGGER "configs_log_delete" AFTER DELETE ON "configs"
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION "log_config_list_change"();
CREATE TRIGGER "configs_log_truncate" AFTER TRUNCATE ON "configs"
    FOR EACH STATEMENT EXECUTE FUNCTION "log_config_list_change"();
