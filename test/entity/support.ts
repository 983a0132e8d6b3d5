import { PrismaPg } from "@prisma/adapter-pg";
import express from "express";
import pg from "pg";
import { listen, type RunningServer } from "../../common/http-server.js";
import { createEntityRouter } from "../../entity/http/express-adapter.js";
import { PrismaEntityManager } from "../../entity/prisma/prisma-entity-manager.js";
import { EntityServer } from "../../entity/server/server.js";
import { PrismaClient } from "../../generated/prisma/client.js";
import { createTestDatabase, type TestDatabase } from "../support/postgres.js";

export interface Harness {
  db: TestDatabase;
  pool: pg.Pool;
  prisma: PrismaClient;
  /** Reads lists in plain SQL on the pool, as the entity-server command does. */
  manager: PrismaEntityManager;
}

/** A fresh migrated database on the real PostgreSQL and a Prisma client on a pool, as the command opens them. */
export async function openHarness(): Promise<Harness> {
  const db = await createTestDatabase();
  const pool = new pg.Pool({ connectionString: db.url, max: 5 });
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  return { db, pool, prisma, manager: new PrismaEntityManager(prisma, { pool }) };
}

export async function closeHarness(h: Harness | undefined): Promise<void> {
  if (!h) return;
  await h.prisma.$disconnect();
  await h.pool.end();
  await h.db.drop();
}

/** The entity server the tests use: config writable (secret hidden), attempt read-only. */
export function testServer(h: Harness): EntityServer {
  return new EntityServer(h.manager)
    .setEntityAlias("Config", "config", { hidden: ["secret", "previousSecret"] })
    .setEntityAlias("Attempt", "attempt", { readOnly: true });
}

/** The server behind the express adapter on a loopback port. */
export async function serveHttp(server: EntityServer): Promise<RunningServer & { baseUrl: string }> {
  const app = express();
  app.use(createEntityRouter(server, { bodyLimit: "16kb" }));
  const running = await listen(app, { host: "127.0.0.1", port: 0 });
  return { ...running, baseUrl: `http://127.0.0.1:${running.port}` };
}

export function attemptData(configId: string, n: number) {
  return {
    webhookId: "6f0c6d5e-8a47-4a51-9a1b-0c3e5f7d9a10",
    configId,
    config: {
      endpoint: "http://example.test/hook",
      secret: "c2VjcmV0LXNuYXBzaG90",
      eventTypes: ["ledger.committed"],
    },
    payload: `{"n":${n}}`,
    statusCode: 500 + n,
    retryAttempt: n,
    status: n === 0 ? ("toRetry" as const) : ("failed" as const),
    error: n === 0 ? null : `boom ${n}`,
  };
}
