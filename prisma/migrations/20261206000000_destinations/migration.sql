-- Destinations beyond HTTP (docs/webhooks/destinations.md): a config delivers to its HTTP
-- endpoint (NULL, every existing row included) or to the Kafka topic, NATS subject or AMQP
-- exchange this JSON names (core/destinations.ts). It holds no credential: the config row
-- is copied into every attempt row. The destination's credential is sealed beside the
-- endpoint credentials, in config_auth.destination_secret (one JSON object, bound to
-- config_auth.destination_secret:<config id> like the other sealed columns).
ALTER TABLE "configs" ADD COLUMN "destination" JSONB;
ALTER TABLE "config_auth" ADD COLUMN "destination_secret" TEXT;

DROP INDEX "config_auth_plain_credentials";
CREATE INDEX "config_auth_plain_credentials" ON "config_auth" ("config_id")
    WHERE left("header_values", 8) <> 'sealed1.' OR left("basic_password", 8) <> 'sealed1.'
       OR left("bearer_token", 8) <> 'sealed1.' OR left("oauth_client_secret", 8) <> 'sealed1.'
       OR left("tls_private_key", 8) <> 'sealed1.' OR left("destination_secret", 8) <> 'sealed1.';
