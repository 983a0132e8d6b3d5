-- Endpoint health (GET /configs/{id}/stats, --auto-deactivate-after): how long each
-- send took, and why and when a config was deactivated or last activated.
ALTER TABLE "attempts" ADD COLUMN "duration_ms" INTEGER;

ALTER TABLE "configs" ADD COLUMN "deactivated_reason" TEXT;
ALTER TABLE "configs" ADD COLUMN "deactivated_at" TIMESTAMPTZ(3);
ALTER TABLE "configs" ADD COLUMN "activated_at" TIMESTAMPTZ(3);

-- The last successful send of a config: where its current failing streak begins.
CREATE INDEX "attempts_config_succeeded_idx" ON "attempts"("config_id", "created_at")
    WHERE "status_code" BETWEEN 200 AND 299;
