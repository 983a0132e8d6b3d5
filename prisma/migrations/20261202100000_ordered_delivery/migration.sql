-- Ordered delivery (README "Ordered delivery"): a config's ordering settings, null for
-- an unordered config (every config before this migration), e.g. {"enabled": true,
-- "onFailure": "skip"}.
ALTER TABLE "configs" ADD COLUMN "ordering" JSONB;

-- The ordering keys whose workflow runs (workflows/ordered-delivery.ts keeps its row
-- through a local activity: written when it starts, blocks or is released, removed when
-- it ends idle). GET /configs/{id}/ordering-keys and the blocked-keys metric read it.
CREATE TABLE "ordering_keys" (
    "config_id" UUID NOT NULL,
    "ordering_key" TEXT NOT NULL,
    "workflow_id" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "head_webhook_id" UUID,
    "reason" TEXT,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ordering_keys_pkey" PRIMARY KEY ("config_id", "ordering_key"),
    CONSTRAINT "ordering_keys_state_check" CHECK ("state" IN ('active', 'blocked'))
);

CREATE INDEX "ordering_keys_state_idx" ON "ordering_keys"("state");
-- No foreign key to configs: a deleted config's rows name the workflows that deletion must
-- still signal (a blocked key drains); each row goes when its workflow ends idle.

-- An ordered config's delivery waiting in its key's queue has an unsent row from the
-- moment it is accepted, naming the key's workflow: if Temporal loses that workflow,
-- reconciliation (workers/reconcile-ordered.ts) puts the key's waiting deliveries back in
-- it in the order they were accepted. The row stays after the first send ('sent'), so a
-- head that was retrying is known to be the key's.
ALTER TABLE "unsent_deliveries" ADD COLUMN "ordering_workflow_id" TEXT;
CREATE INDEX "unsent_deliveries_ordering_workflow_id_idx" ON "unsent_deliveries"("ordering_workflow_id")
    WHERE "ordering_workflow_id" IS NOT NULL;
