-- AlterTable
ALTER TABLE "attempts" ADD COLUMN     "replay_of" UUID;

-- CreateIndex
CREATE INDEX "attempts_replay_of_idx" ON "attempts"("replay_of");
