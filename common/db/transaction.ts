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
    client.release(broken);
  }
}
