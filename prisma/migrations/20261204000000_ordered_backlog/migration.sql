-- Ordered delivery keeps each key's backlog in rows, not in the key workflow's state
-- (docs/webhooks/ordering-and-batching.md#ordered-delivery). A row per accepted delivery
-- of an ordered config that has not yet had its turn end; the key's sequencer
-- (workflows/key-sequencer.ts) reads them by `seq` and deletes each when its delivery ended.
--
-- `seq` comes from one sequence, taken while the key's ordering_keys row is locked
-- (enqueue_ordered below): within a key, seq order is commit order is acceptance order.
CREATE TABLE "ordered_backlog" (
    "seq" BIGSERIAL NOT NULL,
    -- The sequencer's workflow id (core/ordering.ts orderedWorkflowId): what it reads by.
    "sequencer_id" TEXT NOT NULL,
    "config_id" UUID NOT NULL,
    "ordering_key" TEXT NOT NULL,
    "webhook_id" UUID NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ordered_backlog_pkey" PRIMARY KEY ("seq"),
    CONSTRAINT "ordered_backlog_webhook_id_fkey" FOREIGN KEY ("webhook_id")
        REFERENCES "unsent_deliveries"("webhook_id") ON DELETE CASCADE
);
CREATE UNIQUE INDEX "ordered_backlog_webhook_id_key" ON "ordered_backlog"("webhook_id");
CREATE INDEX "ordered_backlog_sequencer_id_seq_idx" ON "ordered_backlog"("sequencer_id", "seq");

-- The key's row now outlives its sequencer's runs: `idle` when none runs (the next
-- enqueue wakes one), and `last_seq`, the newest backlog row's seq, tells a sequencer
-- about to go idle whether anything arrived since it last read.
ALTER TABLE "ordering_keys" DROP CONSTRAINT "ordering_keys_state_check";
ALTER TABLE "ordering_keys" ADD CONSTRAINT "ordering_keys_state_check"
    CHECK ("state" IN ('active', 'blocked', 'idle'));
ALTER TABLE "ordering_keys" ADD COLUMN "last_seq" BIGINT NOT NULL DEFAULT 0;

-- Deliveries queued in a key workflow of the earlier shape (queue in its state) get their
-- rows too, in acceptance order, behind a head of theirs still retrying: if Temporal loses
-- that workflow, the sequencer takes them over in order (a delivery it finds started runs
-- once, by its workflow id).
INSERT INTO "ordered_backlog" ("sequencer_id", "config_id", "ordering_key", "webhook_id")
SELECT u."ordering_workflow_id", u."config_id",
       COALESCE(k."ordering_key", substr(u."ordering_workflow_id", length('ordered:') + 38)),
       u."webhook_id"
  FROM "unsent_deliveries" u
  LEFT JOIN "ordering_keys" k ON k."workflow_id" = u."ordering_workflow_id"
 WHERE u."ordering_workflow_id" IS NOT NULL
   AND (u."state" = 'waiting'
        OR EXISTS (SELECT 1 FROM "attempts" a
                    WHERE a."webhook_id" = u."webhook_id" AND a."status" IN ('to retry', 'retrying')))
 ORDER BY u."state" = 'waiting', u."accepted_at", u."webhook_id";

-- One round trip per ordered delivery: lock the key, record the delivery's waiting row
-- and its backlog row, and say whether the key's sequencer must be woken (none runs, or a
-- replay arrives for a blocked key). A delivery recorded before (a broker redelivery)
-- adds nothing.
CREATE FUNCTION "enqueue_ordered"(
    p_webhook_id UUID, p_config_id UUID, p_ordering_key TEXT, p_sequencer_id TEXT,
    p_workflow_id TEXT, p_event_id TEXT, p_replay_of UUID, p_accepted_at TIMESTAMPTZ,
    p_reason TEXT
) RETURNS TABLE ("inserted" BOOLEAN, "wake" BOOLEAN) LANGUAGE plpgsql AS $$
DECLARE
    previous TEXT;
    added INT;
    taken BIGINT;
BEGIN
    -- One statement takes the key's row (made when new, locked either way) and its state:
    -- retention deleting an idle row meanwhile cannot leave it without one.
    INSERT INTO ordering_keys (config_id, ordering_key, workflow_id, state)
    VALUES (p_config_id, p_ordering_key, p_sequencer_id, 'idle')
    ON CONFLICT (config_id, ordering_key) DO UPDATE SET state = ordering_keys.state
    RETURNING state INTO previous;
    INSERT INTO unsent_deliveries
        (webhook_id, config_id, workflow_id, event_id, replay_of, accepted_at, reason, next_try_at,
         ordering_workflow_id)
    VALUES (p_webhook_id, p_config_id, p_workflow_id, p_event_id, p_replay_of, p_accepted_at, p_reason,
            p_accepted_at, p_sequencer_id)
    ON CONFLICT (webhook_id) DO NOTHING;
    GET DIAGNOSTICS added = ROW_COUNT;
    IF added = 0 THEN
        -- Woken again only if it still waits in the backlog (an earlier wake may never have left).
        RETURN QUERY SELECT false, previous = 'idle'
            AND EXISTS (SELECT 1 FROM ordered_backlog WHERE webhook_id = p_webhook_id);
        RETURN;
    END IF;
    INSERT INTO ordered_backlog (sequencer_id, config_id, ordering_key, webhook_id)
    VALUES (p_sequencer_id, p_config_id, p_ordering_key, p_webhook_id)
    RETURNING seq INTO taken;
    UPDATE ordering_keys
       SET last_seq = taken, workflow_id = p_sequencer_id, updated_at = now(),
           state = CASE WHEN state = 'idle' THEN 'active' ELSE state END
     WHERE config_id = p_config_id AND ordering_key = p_ordering_key;
    RETURN QUERY SELECT true, previous = 'idle' OR (previous = 'blocked' AND p_replay_of IS NOT NULL);
END
$$;
