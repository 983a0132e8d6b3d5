import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, openSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { Connection } from "@temporalio/client";
import type { Logger } from "./logger.js";
import { fromRoot } from "./paths.js";

export interface DevServerOptions {
  ip?: string;
  port?: number;
  uiPort?: number;
  /** SQLite file that keeps workflows across restarts; in memory when absent. */
  dbFile?: string;
  headless?: boolean;
  logger?: Logger;
  /** Where the server's own output goes; inherited stderr when absent. */
  logFile?: string;
  startTimeoutMs?: number;
  /** Search attributes registered at start, as `Name=Type` (the caller's service owns them). */
  searchAttributes?: string[];
  /** Extra dynamic config values (`KEY` → JSON value), e.g. lower history limits in tests. */
  dynamicConfig?: Record<string, string>;
}

export interface DevServer {
  address: string;
  uiUrl?: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/** TEMPORAL_CLI_PATH, then the copy scripts/setup.sh installs, then PATH. */
export function temporalCliPath(): string {
  if (process.env.TEMPORAL_CLI_PATH) return process.env.TEMPORAL_CLI_PATH;
  const local = fromRoot(".tools", "temporal");
  return existsSync(local) ? local : "temporal";
}

/** SQLite settings of a dev server that keeps its state in a file. */
export const SQLITE_FILE_PRAGMAS = ["journal_mode=wal", "synchronous=normal"];

/** Arguments of `temporal server start-dev` for our stack (shared with temporal-dev.yml's test). */
export function devServerArgs(opts: DevServerOptions): string[] {
  const args = ["server", "start-dev", "--ip", opts.ip ?? "127.0.0.1", "--port", String(opts.port ?? 7233)];
  if (opts.headless) args.push("--headless");
  else args.push("--ui-port", String(opts.uiPort ?? (opts.port ?? 7233) + 1000));
  if (opts.dbFile) {
    // SQLite's default rollback journal syncs every commit to disk, which halves the
    // workflows a second the dev server completes here; WAL with normal sync keeps
    // the file consistent across crashes of the server (not of the machine).
    args.push("--db-filename", opts.dbFile);
    for (const pragma of SQLITE_FILE_PRAGMAS) args.push("--sqlite-pragma", pragma);
  }
  for (const sa of opts.searchAttributes ?? []) args.push("--search-attribute", sa);
  args.push("--log-level", "warn", "--dynamic-config-value", "limit.maxIDLength=255");
  for (const [key, value] of Object.entries(opts.dynamicConfig ?? {}))
    args.push("--dynamic-config-value", `${key}=${value}`);
  return args;
}

/** Spawns the Temporal dev server and resolves once its frontend answers gRPC. */
export async function startDevServer(opts: DevServerOptions = {}): Promise<DevServer> {
  const ip = opts.ip ?? "127.0.0.1";
  const port = opts.port ?? 7233;
  const address = `${ip}:${port}`;
  if (opts.dbFile) await mkdir(path.dirname(opts.dbFile), { recursive: true });
  const cli = temporalCliPath();
  const out = opts.logFile ? openSync(opts.logFile, "a") : "inherit";
  const child = spawn(cli, devServerArgs(opts), { stdio: ["ignore", out, out] });
  const exited = new Promise<string>((resolve) => {
    child.once("error", (err) =>
      resolve(`cannot run ${cli}: ${err.message} (run scripts/setup.sh or set TEMPORAL_CLI_PATH)`),
    );
    child.once("exit", (code, signal) => resolve(`temporal dev server exited (${signal ?? code})`));
  });
  const deadline = Date.now() + (opts.startTimeoutMs ?? 60_000);
  let lastError = "";
  for (;;) {
    const outcome = await Promise.race([
      exited,
      Connection.connect({ address, connectTimeout: 1000 })
        .then(async (c) => {
          await c.workflowService.getSystemInfo({});
          await c.close();
          return "ok";
        })
        .catch((err: Error) => {
          lastError = err.message;
          return "retry";
        }),
    ]);
    if (outcome === "ok") break;
    if (outcome !== "retry") throw new Error(outcome);
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`temporal dev server did not answer on ${address}: ${lastError}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  const uiUrl = opts.headless ? undefined : `http://${ip}:${opts.uiPort ?? port + 1000}`;
  opts.logger?.info({ address, uiUrl, dbFile: opts.dbFile ?? "(memory)" }, "temporal dev server ready");
  return {
    address,
    ...(uiUrl ? { uiUrl } : {}),
    process: child,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const done = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await done;
      clearTimeout(timer);
    },
  };
}
