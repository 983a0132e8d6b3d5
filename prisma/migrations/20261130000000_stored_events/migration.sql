-- Events by reference: each accepted event is stored once, under the hash of the body
-- that is sent (so its fan-out to many configs and its redeliveries share one row), and
-- workflows and activities carry its id instead of the event. The send reads the bytes it
-- signs from here. Attempt rows and unsent rows reference it instead of keeping a copy
-- each; rows written before this migration keep their own payload.
CREATE TABLE "events" (
    "id" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "idempotency_key" TEXT NOT NULL,
    "body" TEXT NOT NULL,
    "bytes" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    CONSTRAINT "events_pkey" PRIMARY KEY ("id")
);

-- Retention removes events no row references any more, oldest first.
CREATE INDEX "events_created_at_idx" ON "events"("created_at");

ALTER TABLE "attempts" ADD COLUMN "event_id" TEXT, ALTER COLUMN "payload" DROP NOT NULL,
  ADD CONSTRAINT "attempts_payload_or_event" CHECK ("payload" IS NOT NULL OR "event_id" IS NOT NULL),
  ADD CONSTRAINT "attempts_event_id_fkey" FOREIGN KEY ("event_id") REFERENCES "events"("id")
    ON DELETE RESTRICT ON UPDATE CASCADE;
CREATE INDEX "attempts_event_id_idx" ON "attempts"("event_id");

ALTER TABLE "unsent_deliveries" ADD COLUMN "event_id" TEXT, ALTER COLUMN "payload" DROP NOT NULL,
  ADD CONSTRAINT "unsent_deliveries_payload_or_event" CHECK ("payload" IS NOT NULL OR "event_id" IS NOT NULL),
  ADD CONSTRAINT "unsent_deliveries_event_id_fkey" FOREIGN KEY ("event_id") REFERENCES "events"("id")
    ON DELETE RESTRICT ON UPDATE CASCADE;
CREATE INDEX "unsent_deliveries_event_id_idx" ON "unsent_deliveries"("event_id");
