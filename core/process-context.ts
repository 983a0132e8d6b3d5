import path from "node:path";
import { Client, Connection } from "@temporalio/client";
import { type Database, openDatabase } from "../common/db/database.js";
import type { HealthCheck } from "../common/health.js";
import { createLogger, type Logger } from "../common/logger.js";
import { Shutdown } from "../common/shutdown.js";
import { type TemporalOptions, temporalTls } from "../common/temporal.js";
import type { ConfigSecrets } from "./config-secrets.js";
import { EgressPolicy } from "./egress-policy.js";
import { EventCatalog } from "./event-catalog.js";
import { observeDatabasePool } from "./metrics.js";
import type { WebhooksOptions } from "./options.js";
import { startConfigSecrets } from "./secrets-startup.js";
import { type DeliveryTracing, startDeliveryTracing } from "./tracing.js";

/** What a start needs of the workflow worker's slots (workers/workflow-task-slots.ts). */
export interface StartSlots {
  whenFree(maxWaitMs: number): Promise<void>;
  started(): void;
}

/** What a start needs of the count of deliveries with a send in flight (workers/deliveries-in-flight.ts). */
export interface StartPacing {
  /** `counted`: this start added the delivery's entry (workers/deliveries-in-flight.ts). */
  reserve(workflowId: string, maxWaitMs: number): Promise<{ waited: boolean; counted: boolean }>;
  remove(workflowId: string): void;
}

/** What every webhooks process holds: logs, shutdown steps, the database and a Temporal client. */
export interface ProcessContext {
  options: WebhooksOptions;
  logger: Logger;
  shutdown: Shutdown;
  db: Database;
  temporal: Client;
  temporalConnection: Connection;
  /** Where sends may go: the same policy for deliveries and test deliveries. */
  egress: EgressPolicy;
  /** Seals and opens config secrets with the process's key ring. */
  secrets: ConfigSecrets;
  /**
   * A client on the workflow worker's own NativeConnection, set by startDeliveryWorker
   * while this process polls the delivery workflow queue with --eager-start; deliveries
   * started through it ask for eager start (the SDK requires that shared connection).
   */
  eagerStarter?: Client;
  /**
   * Set with eagerStarter: the worker's workflow-task slots as starts see them. A start
   * waits (at most the given time) for a free slot, and says when it came back.
   */
  startSlots?: StartSlots;
  /**
   * Set with eagerStarter: deliveries of this process with a send in flight. A start waits
   * (at most the given time) until fewer than --max-deliveries-in-flight are.
   */
  inFlight?: StartPacing;
  /** --tracing: the span setup every client and worker of this process uses. */
  tracing?: DeliveryTracing | undefined;
  /** This process's copy of the event catalog (types, deprecation, compiled schemas). */
  catalog: EventCatalog;
}

/** What closing takes beyond the worker's drain: the HTTP server, the consumer, the database. */
const SHUTDOWN_MARGIN_MS = 15_000;

/**
 * How long closing may take before the process gives up and exits 1: the worker
 * waits --shutdown-grace for in-flight sends, then cancels them, and a send
 * under way still ends within --send-timeout (it is never cut mid-request).
 */
export const shutdownTimeout = (s: WebhooksOptions): number =>
  Math.max(s.shutdownGrace, s.sendTimeout) + SHUTDOWN_MARGIN_MS;

export async function startProcessContext(options: WebhooksOptions, role: string): Promise<ProcessContext> {
  const logger = createLogger(`webhooks-${role}`, options.logLevel);
  const shutdown = new Shutdown(logger, shutdownTimeout(options));
  const db = await openDatabase({
    connString: options.storageSqldbConnString,
    embeddedDataDir: path.join(options.dataDir, "pglite"),
    autoMigrate: options.autoMigrate,
    poolMax: options.storagePoolSize,
    connectTimeoutMs: options.storageConnectTimeout,
    statementTimeoutMs: options.storageStatementTimeout,
    logger,
  });
  shutdown.add("database", () => db.close());
  observeDatabasePool(db.pool);
  if (db.embedded) logger.info({ url: db.url }, "using the embedded database (one transaction at a time)");
  const secrets = await startConfigSecrets(options, db, logger);
  // Added first, so it closes last: the spans of everything that stops before are exported.
  const tracing = await startDeliveryTracing(options.tracing, logger);
  if (tracing) shutdown.add("tracing", () => tracing.shutdown());
  const connection = await connectTemporal(options.temporal, logger);
  shutdown.add("temporal client", () => connection.close());
  const temporal = new Client({
    connection,
    namespace: options.temporal.namespace,
    ...(tracing ? { interceptors: { workflow: [tracing.clientInterceptor] } } : {}),
  });
  const egress = new EgressPolicy(options.egress);
  if (!options.egress.denyPrivate && options.egress.allow.length === 0)
    logger.warn(
      "egress: --egress-allow-private is on: webhooks may be sent to private and loopback addresses (fine for local receivers, never for a deployment whose tenants set endpoints)",
    );
  const catalog = new EventCatalog(db.pool, logger);
  return {
    options,
    logger,
    shutdown,
    db,
    temporal,
    temporalConnection: connection,
    egress,
    secrets,
    tracing,
    catalog,
  };
}

export async function connectTemporal(opts: TemporalOptions, logger: Logger): Promise<Connection> {
  const tls = await temporalTls(opts);
  try {
    const connection = await Connection.connect({
      address: opts.address,
      ...(tls ? { tls } : {}),
      ...(opts.apiKey ? { apiKey: opts.apiKey } : {}),
      connectTimeout: "10s",
    });
    logger.info({ address: opts.address, namespace: opts.namespace }, "connected to Temporal");
    return connection;
  } catch (err) {
    throw new Error(`cannot reach Temporal at ${opts.address}: ${(err as Error).message}`);
  }
}

/**
 * Health checks of a webhooks process: its database, Temporal, and the worker
 * and broker when it runs them; with the consumer, the dead letters parked on
 * disk because the store refused them (failing while any waits there).
 */
export function healthChecks(
  ctx: ProcessContext,
  worker?: { state(): string },
  consumer?: { healthy(): Promise<unknown>; deadLettersHealthy(): Promise<void> },
): Record<string, HealthCheck> {
  return {
    // On Prisma's pool, without Prisma: its error is a multi-line "Invalid `prisma.$queryRaw()`
    // invocation" dump, where pg's names the cause ("connect ECONNREFUSED …", "the database
    // system is starting up").
    database: () => ctx.db.pool.query("SELECT 1"),
    temporal: () => ctx.temporalConnection.healthService.check({}),
    ...(worker
      ? {
          worker: async () => {
            if (worker.state() !== "RUNNING") throw new Error(`worker is ${worker.state()}`);
          },
        }
      : {}),
    ...(consumer
      ? { broker: () => consumer.healthy(), deadLetters: () => consumer.deadLettersHealthy() }
      : {}),
  };
}
