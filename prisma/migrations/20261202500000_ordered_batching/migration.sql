-- Ordered configs may batch (README "Ordered delivery", "Batched delivery"): each ordering
-- key's events go in batches, one after the other. The constraint that kept the two apart
-- (migration 20261202400000_batching) goes.
ALTER TABLE "configs" DROP CONSTRAINT IF EXISTS "configs_batch_unordered_check";
