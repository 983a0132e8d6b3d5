-- GET /configs/{id}/deliveries (api/delivery-list.ts) lists a config's deliveries that have
-- no attempt row yet newest first by acceptance: walk them by (config, accepted_at, id)
-- instead of sorting every unsent row of the config. The attempt side walks the existing
-- attempts (config_id, created_at) index.
CREATE INDEX "unsent_deliveries_config_id_accepted_at_webhook_id_idx"
    ON "unsent_deliveries"("config_id", "accepted_at", "webhook_id");
