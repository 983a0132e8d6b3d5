-- Which names a config's deliveries carry their signature under
-- (docs/webhooks/security.md#verifying-with-a-standard-webhooks-library): `svc`
-- (svc-webhook-id, -timestamp, -signature) or `standard` (webhook-id, -timestamp, -signature,
-- as Standard Webhooks names them). NULL, every existing row included: the deployment's
-- default (--signature-headers), so nothing sent changes until a config or the flag says so.
CREATE TYPE "signature_header_style" AS ENUM ('svc', 'standard');
ALTER TABLE "configs" ADD COLUMN "signature_headers" "signature_header_style";
