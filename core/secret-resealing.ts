import type pg from "pg";
import type { Logger } from "../common/logger.js";
import { resealAuth } from "./auth-resealing.js";
import type { ConfigSecrets } from "./config-secrets.js";
import type { ResealOptions, ResealProgress } from "./reseal-progress.js";
import type { KeyRing } from "./sealing.js";

// Moving config secrets to the newest key in batches: processes with a key ring seal plain
// rows (`plainOnly`) at startup and every reconciliation tick (another writer, plain SQL or
// the entity server, may store one), `webhooks secrets rekey` moves every row. Safe while the service runs:
// each row is rewritten only if it still holds what was read (a compare-and-set), so a
// secret changed through the API meanwhile is never overwritten; that write was sealed
// by its own process. Resumable: what is left to do is what the query finds, so a run
// that stopped is simply run again.

/**
 * Rows that still need the work: a value that is not sealed under the newest key, or (plainOnly)
 * not sealed at all. The plain test is written as the partial index configs_plain_secrets
 * (migration 20261201200000_sealed_secrets) defines it, so that the check every
 * reconciliation tick makes is a look at an empty index.
 */
function pendingWhere(ring: KeyRing, plainOnly: boolean): { sql: string; params: string[] } {
  return plainOnly
    ? { sql: `(left(secret, 8) <> 'sealed1.' OR left(previous_secret, 8) <> 'sealed1.')`, params: [] }
    : {
        sql: `(left(secret, length($1)) <> $1 OR left(previous_secret, length($1)) <> $1)`,
        params: [`sealed1.${ring.newestId}.`],
      };
}

export async function countPending(pool: pg.Pool, ring: KeyRing, plainOnly: boolean): Promise<number> {
  const where = pendingWhere(ring, plainOnly);
  const { rows } = await pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM configs WHERE ${where.sql}`,
    where.params,
  );
  return rows[0]!.n;
}

export async function resealConfigs(
  pool: pg.Pool,
  secrets: ConfigSecrets,
  opts: ResealOptions,
): Promise<ResealProgress> {
  const ring = secrets.ring;
  if (!ring) throw new Error("sealing secrets needs a key ring (--secrets-key-file)");
  const where = pendingWhere(ring, opts.plainOnly);
  const progress: ResealProgress = {
    total: await countPending(pool, ring, opts.plainOnly),
    moved: 0,
    changedMeanwhile: 0,
  };
  let after = "00000000-0000-0000-0000-000000000000";
  for (;;) {
    const { rows } = await pool.query<{ id: string; secret: string; previous_secret: string | null }>(
      `SELECT id::text, secret, previous_secret FROM configs
        WHERE id > $${where.params.length + 1}::uuid AND ${where.sql}
        ORDER BY configs.id LIMIT $${where.params.length + 2}`,
      [...where.params, after, opts.batchSize],
    );
    if (rows.length === 0) return progress;
    for (const r of rows) {
      // Opened first: a value this ring cannot open stops the run with the key id it needs.
      const secret = secrets.seal(r.id, "secret", secrets.open(r.id, "secret", r.secret));
      const previous =
        r.previous_secret === null
          ? null
          : secrets.seal(r.id, "previous_secret", secrets.open(r.id, "previous_secret", r.previous_secret));
      const { rowCount } = await pool.query(
        `UPDATE configs SET secret = $2, previous_secret = $3
          WHERE id = $1::uuid AND secret = $4 AND previous_secret IS NOT DISTINCT FROM $5`,
        [r.id, secret, previous, r.secret, r.previous_secret],
      );
      if (rowCount === 1) progress.moved++;
      else progress.changedMeanwhile++;
    }
    after = rows[rows.length - 1]!.id;
    opts.onBatch?.({ ...progress });
    if (opts.pauseMs) await new Promise((resolve) => setTimeout(resolve, opts.pauseMs));
  }
}

/** Seals the plain secrets found (none with --insecure-plaintext-secrets), saying so when there were any. */
export async function sealPlainSecrets(pool: pg.Pool, secrets: ConfigSecrets, logger: Logger): Promise<void> {
  if (!secrets.ring) return;
  const sealed = await resealConfigs(pool, secrets, { plainOnly: true, batchSize: 500 });
  if (sealed.total > 0)
    logger.info(
      { sealed: sealed.moved, changedMeanwhile: sealed.changedMeanwhile, key: secrets.ring.newestId },
      "secrets at rest: sealed the plain secrets found",
    );
  const credentials = await resealAuth(pool, secrets, { plainOnly: true, batchSize: 500 });
  if (credentials.total > 0)
    logger.info(
      {
        sealed: credentials.moved,
        changedMeanwhile: credentials.changedMeanwhile,
        key: secrets.ring.newestId,
      },
      "secrets at rest: sealed the plain endpoint credentials found",
    );
}
