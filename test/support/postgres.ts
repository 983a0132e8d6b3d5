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

/** How long a drop waits for the file's own connections to finish closing before forcing them. */
const CLOSING_GRACE_MS = 1_000;

/**
 * DROP DATABASE … WITH (FORCE), once the file's connections are gone or after a grace. A
 * pool's `end()` resolves before its sockets have closed: forced at that moment, a closing
 * connection gets "terminating connection due to administrator command" with no listener
 * left, an uncaught error in the test process. PostgreSQL 15 also refuses the drop while an
 * autovacuum worker is in the database (our role may not terminate that process: "must be
 * a member of the role whose process is being terminated"); the worker is done within
 * moments, so that one refusal is tried again, for up to 10 s.
 */
async function dropDatabase(name: string): Promise<void> {
  await withAdminClient(async (client) => {
    const graceEnds = Date.now() + CLOSING_GRACE_MS;
    while (Date.now() < graceEnds && (await connectionsTo(client, name)) > 0)
      await new Promise((r) => setTimeout(r, 50));
    const deadline = Date.now() + 10_000;
    for (;;) {
      try {
        await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
        return;
      } catch (err) {
        const busy = (err as { code?: string }).code === "42501" && /pg_signal_backend/.test(String(err));
        if (!busy || Date.now() > deadline) throw err;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  });
}

/** Runs `use` on one connection to the admin database, closed afterwards. */
async function withAdminClient<T>(use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}

async function adminQuery(sql: string): Promise<void> {
  await withAdminClient((client) => client.query(sql));
}

/** Client connections (not autovacuum) open to database `name`. */
async function connectionsTo(client: pg.Client, name: string): Promise<number> {
  const { rows } = await client.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend'",
    [name],
  );
  return rows[0]!.n;
}
