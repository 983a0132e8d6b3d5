import { formatDuration } from "../duration.js";

// The pool's two bounds and how a query that ran into one reads to a user: the
// raw errors ("canceling statement due to statement timeout", "timeout exceeded
// when trying to connect") say neither which setting nor how long.

export interface DatabaseTimeouts {
  /** How long a query waits for a connection (0: forever). */
  connectMs: number;
  /** How long the server lets a statement run (0: forever). */
  statementMs: number;
}

/** PostgreSQL's SQLSTATE for a statement cancelled by `statement_timeout`. */
const QUERY_CANCELED = "57014";
const POOL_TIMEOUT = "timeout exceeded when trying to connect";

/** Which bound `err` ran into, looking through Prisma's and the driver adapter's wrapping. */
export function databaseTimeoutOf(err: unknown): "statement" | "connect" | undefined {
  for (let e = err as Record<string, unknown> | undefined, depth = 0; e && depth < 5; depth++) {
    if (e.code === QUERY_CANCELED || e.originalCode === QUERY_CANCELED) return "statement";
    if (typeof e.message === "string") {
      if (e.message.includes(POOL_TIMEOUT)) return "connect";
      if (e.message.includes(`Code: \`${QUERY_CANCELED}\``)) return "statement";
    }
    const meta = e.meta as { driverAdapterError?: { cause?: unknown } } | undefined;
    e = (meta?.driverAdapterError?.cause ?? e.cause) as Record<string, unknown> | undefined;
  }
  return undefined;
}

/** A sentence naming the flag and its value when `err` is one of the pool's timeouts. */
export function explainDatabaseTimeout(err: unknown, limits: DatabaseTimeouts): string | undefined {
  switch (databaseTimeoutOf(err)) {
    case "statement":
      return `the database did not finish a statement within ${formatDuration(limits.statementMs)} (--storage-sqldb-statement-timeout)`;
    case "connect":
      return `no database connection was free or could be opened within ${formatDuration(limits.connectMs)} (--storage-sqldb-connect-timeout, --storage-sqldb-pool-size)`;
    default:
      return undefined;
  }
}
