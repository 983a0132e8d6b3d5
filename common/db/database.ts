import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { PrismaClient } from "../../generated/prisma/client.js";
import type { Logger } from "../logger.js";
import { EMBEDDED_MAX_CONNECTIONS, startEmbeddedPostgres } from "./embedded-postgres.js";
import { applyMigrations, type MigrationResult, type SqlRunner } from "./migrate.js";
import type { DatabaseTimeouts } from "./timeouts.js";

export type { PrismaClient };

export interface DatabaseOptions {
  /** PostgreSQL connection string; absent means the embedded PGlite database. */
  connString?: string | undefined;
  /** Data folder of the embedded database. */
  embeddedDataDir: string;
  autoMigrate: boolean;
  /** Connections in the pool (the embedded database takes fewer). */
  poolMax?: number;
  /** How long a query waits for a connection, opening one or for a free one; 0 waits forever. */
  connectTimeoutMs?: number;
  /** The server cancels any statement running longer (PostgreSQL `statement_timeout`); 0 never. */
  statementTimeoutMs?: number;
  logger?: Logger;
}

export interface Database {
  prisma: PrismaClient;
  /** The connection pool Prisma runs on, for hot paths in plain SQL (no per-query Prisma cost). */
  pool: pg.Pool;
  /** Where the database is reachable (the embedded one too, on a loopback port). */
  url: string;
  embedded: boolean;
  /** The pool's bounds, to explain a query that ran into one (timeouts.ts). */
  timeouts: DatabaseTimeouts;
  migrations?: MigrationResult;
  close(): Promise<void>;
}

/** Connects Prisma (driver adapter, no native engine), migrating first when asked. */
export async function openDatabase(opts: DatabaseOptions): Promise<Database> {
  const embedded = opts.connString
    ? undefined
    : await startEmbeddedPostgres(opts.embeddedDataDir, opts.logger);
  const url = opts.connString || embedded!.url;
  try {
    const migrations = opts.autoMigrate ? await migrate(url, opts.logger) : undefined;
    const max = embedded ? Math.min(EMBEDDED_MAX_CONNECTIONS, opts.poolMax ?? 10) : (opts.poolMax ?? 10);
    const timeouts = { connectMs: opts.connectTimeoutMs ?? 0, statementMs: opts.statementTimeoutMs ?? 0 };
    const pool = new pg.Pool({
      connectionString: url,
      max,
      connectionTimeoutMillis: timeouts.connectMs,
      ...(timeouts.statementMs ? { statement_timeout: timeouts.statementMs } : {}),
    });
    pool.on("error", (err) => opts.logger?.warn({ err: err.message }, "idle database connection failed"));
    const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
    await prisma.$queryRaw`SELECT 1`;
    return {
      prisma,
      pool,
      url,
      embedded: embedded !== undefined,
      timeouts,
      ...(migrations ? { migrations } : {}),
      async close() {
        await prisma.$disconnect();
        await pool.end();
        await embedded?.stop();
      },
    };
  } catch (err) {
    await embedded?.stop();
    throw new Error(`cannot use the database at ${redact(url)}: ${lastLine((err as Error).message)}`);
  }
}

/** The connection string without its password, for messages and logs. */
export const redact = (url: string): string => url.replace(/(\/\/[^:/@]+):[^@/]*@/, "$1:***@");

// Prisma's messages span several lines; the last one says what went wrong.
const lastLine = (text: string): string => text.trim().split("\n").filter(Boolean).at(-1)?.trim() ?? text;

/** Applies the committed migrations over one plain connection. */
export async function migrate(url: string, logger?: Logger): Promise<MigrationResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const runner: SqlRunner = {
      query: async <R>(sql: string, params?: unknown[]) => ({
        rows: (await client.query(sql, params)).rows as R[],
      }),
      exec: (sql) => client.query(sql),
    };
    const result = await applyMigrations(runner, logger);
    logger?.info(
      { applied: result.applied.length, alreadyApplied: result.alreadyApplied.length },
      "migrations",
    );
    return result;
  } finally {
    await client.end();
  }
}
