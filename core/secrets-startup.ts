import os from "node:os";
import path from "node:path";
import type pg from "pg";
import type { Logger } from "../common/logger.js";
import { checkAuthSealingKeys } from "./auth-resealing.js";
import { ConfigSecrets } from "./config-secrets.js";
import type { KeyRing } from "./sealing.js";
import { sealPlainSecrets } from "./secret-resealing.js";
import { ensureKeyFile, readKeyFile } from "./secrets-key-file.js";

// How a serve or worker process gets its key ring, and what it checks before it serves:
// --secrets-key-file when given; on the embedded database (the zero-configuration local
// stack) a key generated in the data dir; against PostgreSQL nothing implicit: either a
// key file or an explicit --insecure-plaintext-secrets.

export interface SecretsOptions {
  secretsKeyFile?: string | undefined;
  insecurePlaintextSecrets: boolean;
  dataDir: string;
}

/** Where the embedded database's key is generated: next to the database, in the data dir. */
export const generatedKeyFile = (dataDir: string) => path.resolve(dataDir, "secrets.keys");

/**
 * The key of the machine's local PostgreSQL as `npm start` (and the tests) use it: one per
 * user, not per data dir, because every checkout and data dir shares that one database.
 */
export const localPostgresKeyFile = () =>
  path.join(
    process.env.XDG_DATA_HOME || path.join(os.homedir(), ".local", "share"),
    "webhooks",
    "local-postgres-secrets.keys",
  );

export async function loadKeyRing(
  opts: SecretsOptions,
  embedded: boolean,
  logger: Logger,
): Promise<KeyRing | null> {
  if (opts.secretsKeyFile && opts.insecurePlaintextSecrets)
    throw new Error("--secrets-key-file and --insecure-plaintext-secrets exclude each other: choose one");
  if (opts.secretsKeyFile) {
    const { ring, warning } = await readKeyFile(opts.secretsKeyFile);
    if (warning) logger.warn(warning);
    logger.info({ keys: ring.ids, sealsWith: ring.newestId }, "secrets at rest: key ring loaded");
    return ring;
  }
  if (opts.insecurePlaintextSecrets) {
    logger.warn("--insecure-plaintext-secrets: signing secrets are stored in plain text in the database");
    return null;
  }
  if (!embedded)
    throw new Error(
      "signing secrets are sealed at rest and PostgreSQL needs a key ring: pass --secrets-key-file FILE " +
        "(or SECRETS_KEY_FILE; docs/webhooks/security.md#secrets-at-rest says how to make one), or accept plain-text secrets " +
        "explicitly with --insecure-plaintext-secrets",
    );
  const file = generatedKeyFile(opts.dataDir);
  const { ring, created } = await ensureKeyFile(file);
  logger.warn(
    { file },
    `secrets at rest are sealed with a key ${created ? "generated now" : "generated earlier"} in the data dir; ` +
      "it is lost with the data dir and sits next to the data it protects: for anything beyond a local stack, " +
      "make a key file (docs/webhooks/security.md#secrets-at-rest) and pass --secrets-key-file FILE or SECRETS_KEY_FILE",
  );
  return ring;
}

/**
 * Throws when a stored secret needs a key the ring lacks (naming it) or one that holds
 * other bytes under its id: better a refusal to start than a send with a wrong signature.
 * False when there is no configs table yet (a database never migrated: nothing stored,
 * and the process's own first query says what is missing).
 */
export async function checkSealingKeys(pool: pg.Pool, secrets: ConfigSecrets): Promise<boolean> {
  const found = await pool
    .query<{ key_id: string; configs: number; config_id: string; value: string; column: string }>(
      `SELECT DISTINCT ON (key_id) key_id, count(*) OVER (PARTITION BY key_id)::int AS configs, config_id, value, "column"
      FROM (SELECT split_part(secret, '.', 2) AS key_id, id::text AS config_id, secret AS value, 'secret' AS "column"
              FROM configs WHERE left(secret, 8) = 'sealed1.'
            UNION ALL
            SELECT split_part(previous_secret, '.', 2), id::text, previous_secret, 'previous_secret'
              FROM configs WHERE left(previous_secret, 8) = 'sealed1.') s
      ORDER BY key_id`,
    )
    .catch((err: { code?: string }) => {
      if (err.code === "42P01") return null;
      throw err;
    });
  if (!found) return false;
  await checkAuthSealingKeys(pool, secrets);
  for (const r of found.rows)
    secrets.checkOpens(r.key_id, "secrets", `${r.configs} stored secret(s), e.g. config ${r.config_id}`, () =>
      secrets.open(r.config_id, r.column as "secret" | "previous_secret", r.value),
    );
  return true;
}

/** checkSealingKeys, then seals any plain secret an older version left. */
export async function checkStoredSecrets(
  pool: pg.Pool,
  secrets: ConfigSecrets,
  logger: Logger,
): Promise<void> {
  if (await checkSealingKeys(pool, secrets)) await sealPlainSecrets(pool, secrets, logger);
}

/** The process's ConfigSecrets, after the checks of checkStoredSecrets. */
export async function startConfigSecrets(
  opts: SecretsOptions,
  db: { pool: pg.Pool; embedded: boolean },
  logger: Logger,
): Promise<ConfigSecrets> {
  const secrets = new ConfigSecrets(await loadKeyRing(opts, db.embedded, logger));
  await checkStoredSecrets(db.pool, secrets, logger);
  return secrets;
}
