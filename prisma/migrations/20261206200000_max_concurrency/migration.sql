-- A config's cap on its sends in flight (maxConcurrency, docs/webhooks/delivery.md#sends-in-flight-per-config):
-- NULL, every existing row included, is no cap. A send counts from its claim to its attempt
-- row, so the claims of the config's sends say how many are out: each claim now names its
-- config (NULL in claims taken before, which no cap counts).
ALTER TABLE "configs" ADD COLUMN "max_concurrency" INTEGER;
ALTER TABLE "send_claims" ADD COLUMN "config_id" UUID;
CREATE INDEX "send_claims_config_live_idx" ON "send_claims"("config_id") WHERE "expires_at" <> 'infinity';

-- Whether the claim (p_webhook, p_attempt) of p_owner may send now: fewer than p_max other
-- live claims of the config. Under a lock per config, and each query with its own snapshot
-- (a VOLATILE function), so two claims checked at once never both pass the last slot; a
-- claim that may not send is given back. One round trip per capped send.
CREATE FUNCTION take_send_slot(p_config UUID, p_webhook UUID, p_attempt INTEGER, p_owner TEXT, p_max INTEGER)
RETURNS BOOLEAN LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  others INTEGER;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('send-slots:' || p_config::text, 0));
  SELECT count(*) INTO others FROM send_claims
   WHERE config_id = p_config AND expires_at > now() AND expires_at <> 'infinity'
     AND NOT (webhook_id = p_webhook AND retry_attempt = p_attempt);
  IF others < p_max THEN
    RETURN TRUE;
  END IF;
  DELETE FROM send_claims
   WHERE webhook_id = p_webhook AND retry_attempt = p_attempt AND owner = p_owner AND expires_at <> 'infinity';
  RETURN FALSE;
END $$;
