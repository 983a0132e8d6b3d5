-- Deliveries whose first send waits (the rate limit service said not yet): before any
-- attempt row exists, this row makes the delivery visible (GET /webhooks/{id}), reachable
-- (cancel, config deactivation) and repairable by reconciliation when Temporal loses its
-- workflow, and keeps when it was accepted: the caps count from there. The first attempt
-- row marks it `sent` in the same statement; a delivery closed before any send is
-- `closed` with its reason.
CREATE TYPE "unsent_state" AS ENUM ('waiting', 'sent', 'closed');

CREATE TABLE "unsent_deliveries" (
    "webhook_id" UUID NOT NULL,
    "config_id" UUID NOT NULL,
    "workflow_id" TEXT NOT NULL,
    "payload" TEXT NOT NULL,
    "replay_of" UUID,
    "state" "unsent_state" NOT NULL DEFAULT 'waiting',
    "reason" TEXT NOT NULL,
    "accepted_at" TIMESTAMPTZ(3) NOT NULL,
    "next_try_at" TIMESTAMPTZ(3) NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    CONSTRAINT "unsent_deliveries_pkey" PRIMARY KEY ("webhook_id")
);

-- Reconciliation walks the waiting ones by due time; retention removes the others by age.
CREATE INDEX "unsent_deliveries_waiting_idx" ON "unsent_deliveries"("next_try_at") WHERE "state" = 'waiting';
CREATE INDEX "unsent_deliveries_config_id_idx" ON "unsent_deliveries"("config_id");
CREATE INDEX "unsent_deliveries_state_updated_at_idx" ON "unsent_deliveries"("state", "updated_at");
