// tags: @needs-services (the PostgreSQL that scripts/setup.sh starts)
import { randomBytes } from "node:crypto";
import pg from "pg";
import { migrate } from "../../common/db/database.js";

/** The PostgreSQL that scripts/setup.sh starts (role with CREATEDB). */
export const ADMIN_URL =
  process.env.TEST_DATABASE_ADMIN_URL ?? "postgresql://webhooks:webhooks@127.0.0.1:5432/webhooks";

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

/** A fresh database for one test file, migrated unless asked not to, dropped afterwards. */
export async function createTestDatabase(opts: { migrated?: boolean } = {}): Promise<TestDatabase> {
  const name = `etp_test_${randomBytes(6).toString("hex")}`;
  await adminQuery(`CREATE DATABASE "${name}"`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  if (opts.migrated !== false) await migrate(url.toString());
  return {
    url: url.toString(),
    name,
    drop: () => dropDatabase(name),
  };
}

/**
 * DROP DATABASE … WITH (FORCE). PostgreSQL 15 refuses it while an autovacuum worker is in
 * the database (our role may not terminate that process: "must be a member of the role
 * whose process is being terminated"); the worker is done within moments, so that one
 * refusal is tried again, for up to 10 s.
 */
async function dropDatabase(name: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      await adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      return;
    } catch (err) {
      const busy = (err as { code?: string }).code === "42501" && /pg_signal_backend/.test(String(err));
      if (!busy || Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
