-- The event catalog: the event types this deployment emits, each with a description,
-- an optional JSON Schema of its payload (kept as written: json, not jsonb), an example
-- payload and a deprecated flag (api/event-type-routes.ts). Every write takes a new
-- version from one sequence, so a process holding compiled schemas recompiles only the
-- types whose version changed (core/event-catalog.ts). The name is unique on its own
-- today; tenants will make it unique per tenant (hence the surrogate id).
CREATE SEQUENCE "event_types_version_seq";

CREATE TABLE "event_types" (
    "id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "schema" JSON,
    "example" JSON,
    "deprecated" BOOLEAN NOT NULL DEFAULT false,
    "version" BIGINT NOT NULL DEFAULT nextval('event_types_version_seq'::regclass),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "event_types_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "event_types_name_key" ON "event_types"("name");
