-- Batched delivery (README "Batched delivery"): a config's batch settings, null when every
-- event goes alone (every config before this migration), e.g. {"maxEvents": 50,
-- "maxWaitMs": 200}.
ALTER TABLE "configs" ADD COLUMN "batch" JSONB;

-- Batching of ordered configs is not supported yet: the constraint keeps a replace that
-- sets one while keeping the other from storing both, whatever the order of concurrent writes.
ALTER TABLE "configs" ADD CONSTRAINT "configs_batch_unordered_check" CHECK ("batch" IS NULL OR "ordering" IS NULL);

-- Each event of a batch keeps its own attempt rows; the batch's id (its POST's
-- svc-webhook-id) says which POST an attempt was, so a batch's events can be told apart.
ALTER TABLE "attempts" ADD COLUMN "batch_id" UUID;
