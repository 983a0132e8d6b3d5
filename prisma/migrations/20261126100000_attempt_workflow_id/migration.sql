-- The Temporal workflow that owns each attempt row: how the API signals or
-- cancels a delivery and how reconciliation checks the row against its workflow.
-- AlterTable
ALTER TABLE "attempts" ADD COLUMN     "workflow_id" TEXT;

-- Reconciliation walks queued rows by due time.
-- CreateIndex
CREATE INDEX "attempts_queued_due_idx" ON "attempts"("next_retry_after", "id") WHERE "status" IN ('to retry', 'retrying');
