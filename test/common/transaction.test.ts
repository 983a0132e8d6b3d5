// tags: @needs-services (the PostgreSQL that scripts/setup.sh starts)
import { expect } from "chai";
import pg from "pg";
import { inTransaction } from "../../common/db/transaction.js";
import { createTestDatabase, type TestDatabase } from "../support/postgres.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A transaction whose connection the server ends between two statements (what a restart of
 * PostgreSQL does to every session): the error reaches the transaction's caller, not the
 * process. Before the fix the pool's lent-out connection had no 'error' listener, and the
 * serve/worker process died of the unhandled event (ordered-failure-postgres.test.ts).
 */
describe("inTransaction when the server ends its connection", () => {
  let db: TestDatabase;
  let pool: pg.Pool;
  let admin: pg.Client;

  before(async () => {
    db = await createTestDatabase({ migrated: false });
    pool = new pg.Pool({ connectionString: db.url, max: 2 });
    pool.on("error", () => {}); // idle connections ended by the server: the pool replaces them
    admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
  });
  after(async () => {
    await admin?.end();
    await pool?.end();
    await db?.drop();
  });

  it("fails the transaction, keeps the process, and the pool goes on with a new connection", async () => {
    let killedPid = 0;
    const failed = await inTransaction(pool, async (client) => {
      const { rows } = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
      killedPid = rows[0]!.pid;
      await admin.query("SELECT pg_terminate_backend($1)", [killedPid]);
      await sleep(300); // the server's FATAL arrives while no statement runs
      await client.query("SELECT 1");
    }).then(
      () => undefined,
      (err: Error) => err,
    );
    expect(failed, "the transaction's error").to.be.instanceOf(Error);
    const { rows } = await pool.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
    expect(rows[0]!.pid).to.not.equal(killedPid);
  });
});
