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
    drop: () => adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`),
  };
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
