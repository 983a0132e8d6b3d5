import pg from "pg";

/**
 * One PostgreSQL session advisory lock, on a connection of its own: among the processes
 * asking for the same key, one holds it at a time. A holder that dies closes its
 * connection and frees the lock at once; one that stops (SIGSTOP, a host cut off) frees it
 * when PostgreSQL ends its silent session (`idle_session_timeout`, PostgreSQL 14 and
 * later). The others take it at their next `hold()`.
 */
export class SessionLock {
  private client: pg.Client | undefined;
  private held = false;

  constructor(
    private readonly o: {
      connString: string;
      /** The two int4 keys of pg_try_advisory_lock. */
      key: [number, number];
      /** application_name of the session (seen in pg_stat_activity). */
      name: string;
      /** PostgreSQL ends the session (freeing the lock) after this long without a statement. */
      silentMs: number;
    },
  ) {}

  /** Whether this process holds the lock now, taking it when free; throws when the database does not answer. */
  async hold(): Promise<boolean> {
    const client = this.client ?? (await this.connect());
    try {
      if (this.held) await client.query("SELECT 1");
      else {
        const { rows } = await client.query<{ ok: boolean }>(
          "SELECT pg_try_advisory_lock($1::int4, $2::int4) AS ok",
          this.o.key,
        );
        this.held = rows[0]?.ok === true;
      }
      return this.held;
    } catch (err) {
      this.drop(client);
      throw err;
    }
  }

  /** Ends the session: the lock is free for another process at once. */
  async close(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.held = false;
    await client?.end().catch(() => {});
  }

  private async connect(): Promise<pg.Client> {
    const client = new pg.Client({
      connectionString: this.o.connString,
      application_name: this.o.name,
      keepAlive: true,
      connectionTimeoutMillis: 5_000,
      query_timeout: 5_000,
    });
    client.on("error", () => this.drop(client));
    client.on("end", () => this.drop(client));
    await client.connect();
    try {
      await client.query(`SET idle_session_timeout = ${Math.ceil(this.o.silentMs)}`);
    } catch (err) {
      await client.end().catch(() => {});
      throw err;
    }
    this.client = client;
    return client;
  }

  /** The session is gone or no longer trusted: so is the lock. */
  private drop(client: pg.Client): void {
    if (client !== this.client) return;
    this.client = undefined;
    this.held = false;
    void client.end().catch(() => {});
  }
}
