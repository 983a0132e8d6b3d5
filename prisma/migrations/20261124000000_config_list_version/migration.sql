-- A counter bumped by every write to "configs", in the writer's own transaction,
-- so a rendering of the full list cached by an API instance can be checked
-- against the database with a one-row read (api/config-list-cache.ts).
CREATE TABLE "config_list_version" (
    "id" BOOLEAN NOT NULL DEFAULT TRUE,
    "version" BIGINT NOT NULL,

    CONSTRAINT "config_list_version_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "config_list_version_single_row" CHECK ("id")
);

INSERT INTO "config_list_version" ("id", "version") VALUES (TRUE, 0);

CREATE FUNCTION "bump_config_list_version"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE "config_list_version" SET "version" = "version" + 1;
    RETURN NULL;
END
$$;

-- Once per statement: a bulk write costs one bump.
CREATE TRIGGER "configs_bump_list_version"
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "configs"
    FOR EACH STATEMENT EXECUTE FUNCTION "bump_config_list_version"();
