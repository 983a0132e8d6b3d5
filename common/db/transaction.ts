import type pg from "pg";

/**
 * Runs `work` in one transaction on one pooled connection: committed when it returns,
 * rolled back when it throws. A connection whose rollback failed is not given back to
 * the pool (its state is unknown).
 */
export async function inTransaction<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  // The pool stops listening for a connection's errors while it is lent out: one that the
  // server ends between two statements (a restart's "terminating connection") would
  // otherwise be an unhandled 'error' event and kill the process. Its next statement fails.
  const lost = () => {
    broken = true;
  };
  client.on("error", lost);
  try {
    await client.query("BEGIN");
    const result = await work(client);
    await client.query("COMMIT");
    return result;
  } catch (err) {
    await client.query("ROLLBACK").catch(() => {
      broken = true;
    });
    throw err;
  } finally {
    client.removeListener("error", lost);
    client.release(broken);
  }
}

/**
 * inTransaction whose commit does not wait for its WAL to reach the disk (synchronous_commit
 * off): for bookkeeping whose loss in a crash of PostgreSQL itself (its last fraction of a
 * second) whoever reads it next notices and redoes. A hot path saves its fsync wait, which
 * on a busy disk is most of a statement's time. Atomicity and order are as in any transaction.
 */
export function inLazyTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  return inTransaction(pool, async (client) => {
    await client.query("SET LOCAL synchronous_commit = off");
    return work(client);
  });
}
