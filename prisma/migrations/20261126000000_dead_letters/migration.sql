-- CreateEnum
CREATE TYPE "dead_letter_status" AS ENUM ('pending', 'replayed');

-- CreateEnum
CREATE TYPE "dead_letter_kind" AS ENUM ('permanent', 'exhausted');

-- CreateTable
CREATE TABLE "dead_letters" (
    "id" UUID NOT NULL,
    "dedup_key" TEXT NOT NULL,
    "topic" TEXT NOT NULL,
    "position" TEXT NOT NULL,
    "message" BYTEA NOT NULL,
    "event_type" TEXT,
    "config_id" UUID,
    "kind" "dead_letter_kind" NOT NULL,
    "reason" TEXT NOT NULL,
    "delivery_count" INTEGER NOT NULL,
    "status" "dead_letter_status" NOT NULL DEFAULT 'pending',
    "replay_attempts" INTEGER NOT NULL DEFAULT 0,
    "last_replay_error" TEXT,
    "replayed_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "dead_letters_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "dead_letters_dedup_key_key" ON "dead_letters"("dedup_key");

-- CreateIndex
CREATE INDEX "dead_letters_created_at_idx" ON "dead_letters"("created_at");

-- CreateIndex
CREATE INDEX "dead_letters_status_created_at_idx" ON "dead_letters"("status", "created_at");
