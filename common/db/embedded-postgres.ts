import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";
import type { Logger } from "../logger.js";

/** Connections the socket server accepts; the Prisma pool must not exceed it. */
export const EMBEDDED_MAX_CONNECTIONS = 4;

export interface EmbeddedPostgres {
  url: string;
  stop(): Promise<void>;
}

/**
 * PGlite (PostgreSQL compiled to WebAssembly) served on a loopback port, so the
 * same driver adapter and other processes can reach it like a real server.
 * It is a single backend: transactions run one at a time.
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  logger?: Logger,
  port = 0,
): Promise<EmbeddedPostgres> {
  await mkdir(dataDir, { recursive: true });
  const lockFile = path.join(dataDir, "etp.lock");
  await takeLock(lockFile);
  const started = Date.now();
  const db = await PGlite.create(dataDir);
  const server = new PGLiteSocketServer({
    db,
    host: "127.0.0.1",
    port,
    maxConnections: EMBEDDED_MAX_CONNECTIONS,
  });
  await server.start();
  const address = server.getServerConn(); // "127.0.0.1:PORT"
  const url = `postgresql://postgres:postgres@${address}/postgres?sslmode=disable`;
  logger?.info({ dataDir, address, ms: Date.now() - started }, "embedded PostgreSQL (PGlite) started");
  return {
    url,
    async stop() {
      await server.stop();
      await db.close();
      await rm(lockFile, { force: true });
    },
  };
}

// PGlite does not guard its data folder against a second process; we do.
async function takeLock(lockFile: string): Promise<void> {
  const holder = Number.parseInt(await readFile(lockFile, "utf8").catch(() => ""), 10);
  if (holder && holder !== process.pid && isAlive(holder)) {
    throw new Error(
      `embedded database ${path.dirname(lockFile)} is in use by process ${holder}; ` +
        "stop it or give --storage-sqldb-conn-string",
    );
  }
  await writeFile(lockFile, String(process.pid));
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
