-- CreateEnum
CREATE TYPE "attempt_status" AS ENUM ('success', 'to retry', 'retrying', 'failed');

-- CreateTable
CREATE TABLE "configs" (
    "id" UUID NOT NULL,
    "name" TEXT NOT NULL DEFAULT '',
    "endpoint" TEXT NOT NULL,
    "event_types" TEXT[],
    "secret" TEXT NOT NULL,
    "previous_secret" TEXT,
    "previous_secret_expires_at" TIMESTAMPTZ(3),
    "active" BOOLEAN NOT NULL DEFAULT true,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "configs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "attempts" (
    "id" UUID NOT NULL,
    "webhook_id" UUID NOT NULL,
    "config_id" UUID NOT NULL,
    "config" JSONB NOT NULL,
    "payload" TEXT NOT NULL,
    "status_code" INTEGER NOT NULL,
    "retry_attempt" INTEGER NOT NULL,
    "status" "attempt_status" NOT NULL,
    "next_retry_after" TIMESTAMPTZ(3),
    "error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "attempts_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "configs_event_types_idx" ON "configs" USING GIN ("event_types");

-- CreateIndex
CREATE INDEX "attempts_config_id_created_at_idx" ON "attempts"("config_id", "created_at");

-- CreateIndex
CREATE INDEX "attempts_status_next_retry_after_idx" ON "attempts"("status", "next_retry_after");

-- CreateIndex
CREATE INDEX "attempts_status_updated_at_idx" ON "attempts"("status", "updated_at");

-- CreateIndex
CREATE UNIQUE INDEX "attempts_webhook_id_retry_attempt_key" ON "attempts"("webhook_id", "retry_attempt");
