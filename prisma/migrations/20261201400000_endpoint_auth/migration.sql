-- Endpoint auth and custom headers of a config (README, Endpoint auth and headers): one
-- optional row per config, in a table of its own so that the config row, which every
-- attempt row copies as its "config" snapshot, never holds a credential. Every credential
-- column is sealed like configs.secret (core/sealing.ts), bound to
-- config_auth.<column>:<config id>; plain only with --insecure-plaintext-secrets.
CREATE TABLE "config_auth" (
    "config_id" UUID NOT NULL,
    -- Custom header names, in order; their values are in "header_values" (sealed, one JSON array).
    "header_names" TEXT[] NOT NULL DEFAULT '{}',
    "header_values" TEXT,
    "basic_username" TEXT,
    "basic_password" TEXT,
    "bearer_token" TEXT,
    "oauth_token_url" TEXT,
    "oauth_client_id" TEXT,
    "oauth_client_secret" TEXT,
    "oauth_scope" TEXT,
    "oauth_audience" TEXT,
    -- PEM: the client certificate and the CA bundle are public; the key is sealed.
    "tls_certificate" TEXT,
    "tls_private_key" TEXT,
    "tls_ca_bundle" TEXT,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),

    CONSTRAINT "config_auth_pkey" PRIMARY KEY ("config_id"),
    CONSTRAINT "config_auth_config_id_fkey" FOREIGN KEY ("config_id") REFERENCES "configs"("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- The rows still holding a plain credential: none once sealed (the startup and every
-- reconciliation tick look here, as configs_plain_secrets does for signing secrets).
CREATE INDEX "config_auth_plain_credentials" ON "config_auth" ("config_id")
    WHERE left("header_values", 8) <> 'sealed1.' OR left("basic_password", 8) <> 'sealed1.'
       OR left("bearer_token", 8) <> 'sealed1.' OR left("oauth_client_secret", 8) <> 'sealed1.'
       OR left("tls_private_key", 8) <> 'sealed1.';
