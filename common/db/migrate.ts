import { createHash, randomUUID } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import type { Logger } from "../logger.js";
import { fromRoot } from "../paths.js";

/** The few calls the runner needs; both `pg.Client` and PGlite provide them. */
export interface SqlRunner {
  query<R = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<{ rows: R[] }>;
  /** Runs a multi-statement script as one simple query (one implicit transaction). */
  exec(sql: string): Promise<unknown>;
}

export interface MigrationResult {
  applied: string[];
  alreadyApplied: string[];
}

// Same advisory lock key as Prisma's own migrate, so the two never run at once.
const LOCK_KEY = 72707369;
export const MIGRATIONS_DIR = fromRoot("prisma", "migrations");

/**
 * Applies the committed SQL migrations in name order and records them in
 * Prisma's `_prisma_migrations` table (checksum = sha256 of migration.sql), so
 * the history stays compatible with Prisma's tooling. The native schema engine
 * is not needed.
 */
export async function applyMigrations(
  db: SqlRunner,
  logger?: Logger,
  dir = MIGRATIONS_DIR,
): Promise<MigrationResult> {
  const names = (await readdir(dir, { withFileTypes: true }))
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  await db.query("SELECT pg_advisory_lock($1)", [LOCK_KEY]);
  try {
    await db.exec(`CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
      "id" VARCHAR(36) PRIMARY KEY NOT NULL,
      "checksum" VARCHAR(64) NOT NULL,
      "finished_at" TIMESTAMPTZ,
      "migration_name" VARCHAR(255) NOT NULL,
      "logs" TEXT,
      "rolled_back_at" TIMESTAMPTZ,
      "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
      "applied_steps_count" INTEGER NOT NULL DEFAULT 0)`);
    const { rows } = await db.query<{ migration_name: string; checksum: string; finished_at: Date | null }>(
      `SELECT migration_name, checksum, finished_at FROM "_prisma_migrations" WHERE rolled_back_at IS NULL`,
    );
    const failed = rows.filter((r) => r.finished_at === null);
    if (failed.length > 0) {
      throw new Error(
        `migration ${failed.map((r) => r.migration_name).join(", ")} failed earlier and is unresolved; ` +
          "fix the database, then mark it rolled back (UPDATE _prisma_migrations SET rolled_back_at = now() ...)",
      );
    }
    const done = new Map(rows.map((r) => [r.migration_name, r.checksum]));
    const result: MigrationResult = { applied: [], alreadyApplied: [] };
    for (const name of names) {
      const sql = await readFile(path.join(dir, name, "migration.sql"), "utf8");
      const checksum = createHash("sha256").update(sql).digest("hex");
      const previous = done.get(name);
      if (previous !== undefined) {
        if (previous !== checksum)
          logger?.warn({ migration: name }, "migration was edited after it was applied");
        result.alreadyApplied.push(name);
        continue;
      }
      const id = randomUUID();
      await db.query(
        `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at) VALUES ($1, $2, $3, now())`,
        [id, checksum, name],
      );
      try {
        await db.exec(sql);
      } catch (err) {
        await db.query(`UPDATE "_prisma_migrations" SET logs = $2 WHERE id = $1`, [id, String(err)]);
        throw new Error(`migration ${name} failed: ${(err as Error).message}`);
      }
      await db.query(
        `UPDATE "_prisma_migrations" SET finished_at = now(), applied_steps_count = 1 WHERE id = $1`,
        [id],
      );
      logger?.info({ migration: name }, "migration applied");
      result.applied.push(name);
    }
    return result;
  } finally {
    await db.query("SELECT pg_advisory_unlock($1)", [LOCK_KEY]);
  }
}
