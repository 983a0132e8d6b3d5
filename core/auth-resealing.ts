import type pg from "pg";
import { byKey, type ConfigSecrets, type KeySample, SAMPLES_PER_KEY } from "./config-secrets.js";
import { authContext, SEALED_AUTH_COLUMNS, type SealedAuthColumn } from "./endpoint-auth-rows.js";
import type { ResealOptions, ResealProgress } from "./reseal-progress.js";
import type { KeyRing } from "./sealing.js";

// Endpoint credentials (table config_auth) moved to the newest key, or sealed when plain,
// the way core/secret-resealing.ts does it for signing secrets: in batches, each row
// rewritten only if it still holds what was read, resumable by running again. The same
// callers run both: the startup and reconciliation (plain values), `secrets rekey` (all).

const COLUMNS = SEALED_AUTH_COLUMNS;

/** A value needing work: not sealed (plainOnly) or not under the newest key; NULL needs none. */
function pendingWhere(ring: KeyRing, plainOnly: boolean): { sql: string; params: string[] } {
  return plainOnly
    ? { sql: `(${COLUMNS.map((c) => `left(${c}, 8) <> 'sealed1.'`).join(" OR ")})`, params: [] }
    : {
        sql: `(${COLUMNS.map((c) => `left(${c}, length($1)) <> $1`).join(" OR ")})`,
        params: [`sealed1.${ring.newestId}.`],
      };
}

/** Rows of config_auth that need the work; 0 when the table does not exist yet. */
export async function countPendingAuth(pool: pg.Pool, ring: KeyRing, plainOnly: boolean): Promise<number> {
  const where = pendingWhere(ring, plainOnly);
  const { rows } = await pool
    .query<{ n: number }>(`SELECT count(*)::int AS n FROM config_auth WHERE ${where.sql}`, where.params)
    .catch((err: { code?: string }) => {
      if (err.code === "42P01") return { rows: [{ n: 0 }] };
      throw err;
    });
  return rows[0]!.n;
}

type AuthRow = { config_id: string } & Record<SealedAuthColumn, string | null>;

export async function resealAuth(
  pool: pg.Pool,
  secrets: ConfigSecrets,
  opts: ResealOptions,
): Promise<ResealProgress> {
  const ring = secrets.ring;
  if (!ring) throw new Error("sealing credentials needs a key ring (--secrets-key-file)");
  const where = pendingWhere(ring, opts.plainOnly);
  const progress: ResealProgress = {
    total: await countPendingAuth(pool, ring, opts.plainOnly),
    moved: 0,
    changedMeanwhile: 0,
  };
  if (progress.total === 0) return progress;
  let after = "00000000-0000-0000-0000-000000000000";
  const n = where.params.length;
  for (;;) {
    const { rows } = await pool.query<AuthRow>(
      `SELECT config_id::text, ${COLUMNS.join(", ")} FROM config_auth
        WHERE config_id > $${n + 1}::uuid AND ${where.sql} ORDER BY config_id LIMIT $${n + 2}`,
      [...where.params, after, opts.batchSize],
    );
    if (rows.length === 0) return progress;
    for (const r of rows) {
      // Opened first: a value this ring cannot open stops the run with the key id it needs.
      const resealed = COLUMNS.map((c) => {
        const stored = r[c];
        if (stored === null) return null;
        const context = authContext(r.config_id, c);
        return secrets.sealIn(context, secrets.openIn(context, stored));
      });
      const { rowCount } = await pool.query(
        `UPDATE config_auth SET ${COLUMNS.map((c, i) => `${c} = $${i + 2}`).join(", ")}
          WHERE config_id = $1::uuid AND ${COLUMNS.map((c, i) => `${c} IS NOT DISTINCT FROM $${i + 2 + COLUMNS.length}`).join(" AND ")}`,
        [r.config_id, ...resealed, ...COLUMNS.map((c) => r[c])],
      );
      if (rowCount === 1) progress.moved++;
      else progress.changedMeanwhile++;
    }
    after = rows[rows.length - 1]!.config_id;
    opts.onBatch?.({ ...progress });
    if (opts.pauseMs) await new Promise((resolve) => setTimeout(resolve, opts.pauseMs));
  }
}

/**
 * Throws when stored credentials need a key the ring lacks (naming it and the column), as
 * checkSealingKeys does for signing secrets, with a few values per key id and column;
 * returns the values that do not open while others under their key do.
 */
export async function checkAuthSealingKeys(pool: pg.Pool, secrets: ConfigSecrets): Promise<KeySample[]> {
  const found = await pool
    .query<{ key_id: string; n: number; config_id: string; value: string; column: SealedAuthColumn }>(
      `SELECT key_id, n, config_id, value, "column" FROM (
         SELECT *, count(*) OVER (PARTITION BY key_id, "column")::int AS n,
                row_number() OVER (PARTITION BY key_id, "column" ORDER BY config_id) AS nth
           FROM (${COLUMNS.map(
             (c) =>
               `SELECT split_part(${c}, '.', 2) AS key_id, config_id::text AS config_id, ${c} AS value, '${c}' AS "column"
                  FROM config_auth WHERE left(${c}, 8) = 'sealed1.'`,
           ).join(" UNION ALL ")}) s) k
        WHERE nth <= ${SAMPLES_PER_KEY} ORDER BY key_id, "column"`,
    )
    .catch((err: { code?: string }) => {
      if (err.code === "42P01") return null;
      throw err;
    });
  const unreadable: KeySample[] = [];
  for (const rows of byKey(found?.rows ?? [], (r) => `${r.key_id}/${r.column}`).values())
    unreadable.push(
      ...secrets.checkOpens(
        rows[0]!.key_id,
        "credentials",
        `${rows[0]!.n} endpoint credential(s) in config_auth.${rows[0]!.column}, e.g. config ${rows[0]!.config_id}`,
        rows.map((r) => ({
          row: `config_auth.${r.column} of config ${r.config_id}`,
          open: () => secrets.openIn(authContext(r.config_id, r.column), r.value),
        })),
      ),
    );
  return unreadable;
}
