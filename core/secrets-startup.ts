import os from "node:os";
import path from "node:path";
import type pg from "pg";
import type { Logger } from "../common/logger.js";
import { checkAuthSealingKeys } from "./auth-resealing.js";
import {
  byKey,
  ConfigSecrets,
  type KeySample,
  SAMPLES_PER_KEY,
  type SecretColumn,
} from "./config-secrets.js";
import { unreadableSecrets } from "./metrics.js";
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
 * Throws when stored secrets need a key the ring lacks (naming it) or one that holds other
 * bytes under its id (none of a few of its values opens): better a refusal to start than
 * sends with a wrong signature. A value that does not open while others under its key do
 * (altered, copied from another row) is that row's problem: returned, not thrown. Null when
 * there is no configs table yet (a database never migrated: nothing stored, and the
 * process's own first query says what is missing).
 */
export async function checkSealingKeys(pool: pg.Pool, secrets: ConfigSecrets): Promise<KeySample[] | null> {
  const found = await pool
    .query<{ key_id: string; n: number; config_id: string; value: string; column: SecretColumn }>(
      `SELECT key_id, n, config_id, value, "column" FROM (
         SELECT *, count(*) OVER (PARTITION BY key_id)::int AS n,
                row_number() OVER (PARTITION BY key_id ORDER BY config_id, "column") AS nth
           FROM (SELECT split_part(secret, '.', 2) AS key_id, id::text AS config_id, secret AS value, 'secret' AS "column"
                   FROM configs WHERE left(secret, 8) = 'sealed1.'
                 UNION ALL
                 SELECT split_part(previous_secret, '.', 2), id::text, previous_secret, 'previous_secret'
                   FROM configs WHERE left(previous_secret, 8) = 'sealed1.') s) k
        WHERE nth <= ${SAMPLES_PER_KEY} ORDER BY key_id`,
    )
    .catch((err: { code?: string }) => {
      if (err.code === "42P01") return null;
      throw err;
    });
  if (!found) return null;
  const unreadable = await checkAuthSealingKeys(pool, secrets);
  for (const rows of byKey(found.rows, (r) => r.key_id).values())
    unreadable.push(
      ...secrets.checkOpens(
        rows[0]!.key_id,
        "secrets",
        `${rows[0]!.n} stored secret(s), e.g. config ${rows[0]!.config_id}`,
        rows.map((r) => ({
          row: `configs.${r.column} of config ${r.config_id}`,
          open: () => secrets.open(r.config_id, r.column, r.value),
        })),
      ),
    );
  return unreadable;
}

/** checkSealingKeys, then seals any plain secret an older version left. */
export async function checkStoredSecrets(
  pool: pg.Pool,
  secrets: ConfigSecrets,
  logger: Logger,
): Promise<void> {
  const unreadable = await checkSealingKeys(pool, secrets);
  if (!unreadable) return;
  unreadableSecrets.set(unreadable.length);
  if (unreadable.length)
    logger.error(
      { rows: unreadable.slice(0, 20).map((u) => u.row), sampled: unreadable.length },
      "stored secrets that do not open with their key (altered, or copied from another row): the sends of these configs fail, saying why, until the value is set again (PUT /configs/{id}/secret/change, PATCH /configs/{id}/auth); every other config is served",
    );
  await sealPlainSecrets(pool, secrets, logger);
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
