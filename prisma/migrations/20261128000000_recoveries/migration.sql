-- Bulk recovery (POST /configs/{id}/recover): one row per config and idempotency key,
-- holding the request and the progress its workflow reports.
CREATE TYPE "recovery_state" AS ENUM ('running', 'done', 'failed');

CREATE TABLE "recoveries" (
    "id" UUID NOT NULL,
    "config_id" UUID NOT NULL,
    "idempotency_key" TEXT NOT NULL,
    "since" TIMESTAMPTZ(3) NOT NULL,
    "until" TIMESTAMPTZ(3) NOT NULL,
    "event_types" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[],
    "state" "recovery_state" NOT NULL DEFAULT 'running',
    "matched" INTEGER NOT NULL DEFAULT 0,
    "started" INTEGER NOT NULL DEFAULT 0,
    "already_started" INTEGER NOT NULL DEFAULT 0,
    "failed_to_start" INTEGER NOT NULL DEFAULT 0,
    "last_error" TEXT,
    "workflow_id" TEXT NOT NULL,
    "finished_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "recoveries_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "recoveries_config_id_idempotency_key_key" ON "recoveries"("config_id", "idempotency_key");
CREATE INDEX "recoveries_config_id_created_at_idx" ON "recoveries"("config_id", "created_at");

-- A recovery walks a config's failed deliveries by the time they ended.
CREATE INDEX "attempts_config_failed_idx" ON "attempts"("config_id", "updated_at") WHERE "status" = 'failed';
