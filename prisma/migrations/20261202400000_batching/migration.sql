-- Batched delivery (README "Batched delivery"): a config's batch settings, null when every
-- event goes alone (every config before this migration), e.g. {"maxEvents": 50,
-- "maxWaitMs": 200}.
ALTER TABLE "configs" ADD COLUMN "batch" JSONB;

-- Batching of ordered configs is not supported yet: the constraint keeps a replace that
-- sets one while keeping the other from storing both, whatever the order of concurrent writes.
ALTER TABLE "configs" ADD CONSTRAINT "configs_batch_unordered_check" CHECK ("batch" IS NULL OR "ordering" IS NULL);
