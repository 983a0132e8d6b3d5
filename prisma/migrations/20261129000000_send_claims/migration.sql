-- Send claims: one attempt number of one delivery is sent by at most one live activity
-- execution. A send takes its (webhook_id, retry_attempt) claim before the POST and renews
-- it while it runs (expires_at); writing the attempt row marks the claim done
-- (expires_at = 'infinity'). A second execution of the same send (Temporal retried it while
-- the first still ran) finds the claim live and backs off instead of POSTing again; once
-- the claim is done it finds the row. An expired claim means its sender died: taken over.
CREATE TABLE "send_claims" (
    "webhook_id" UUID NOT NULL,
    "retry_attempt" INTEGER NOT NULL,
    "owner" TEXT NOT NULL,
    "taken_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "send_claims_pkey" PRIMARY KEY ("webhook_id", "retry_attempt")
);

-- Retention removes claims by age.
CREATE INDEX "send_claims_taken_at_idx" ON "send_claims"("taken_at");
