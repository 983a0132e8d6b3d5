import { Option } from "commander";

// The key-ring flags shared by `webhooks` and `entity-server` (both write config secrets).

export const secretsKeyFileOption = () =>
  new Option(
    "--secrets-key-file <file>",
    "key ring sealing signing secrets at rest: one `<id> <base64 of 32 bytes>` a line, the last one seals new writes",
  ).env("SECRETS_KEY_FILE");

export const insecurePlaintextSecretsOption = () =>
  new Option(
    "--insecure-plaintext-secrets",
    "store signing secrets in plain text, without a key ring (PostgreSQL refuses to start without one or the other)",
  ).default(false);
