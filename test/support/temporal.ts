// tags: @needs-services (starts the Temporal dev server or the production server)
import { execFile } from "node:child_process";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { type WorkflowHandle, WorkflowNotFoundError } from "@temporalio/client";
import { fromRoot } from "../../common/paths.js";
import { startDevServer } from "../../common/temporal-dev-server.js";
import { searchAttributeCliArgs } from "../../workflows/search-attributes.js";
import { freePort, portIsFree } from "./ports.js";

export interface TestTemporal {
  address: string;
  /** The server's processes (one per node), for CPU accounting in benchmarks. */
  pids(): Promise<number[]>;
  stop(): Promise<void>;
}

let server: Promise<TestTemporal> | undefined;

/**
 * One real Temporal server for the whole test run, started on first use and
 * stopped by hooks.ts: the dev server (headless, in memory, our search
 * attributes registered), or with TEST_TEMPORAL=server the production server on
 * PostgreSQL (scripts/temporal-server.sh, fresh databases of its own), one node or
 * TEST_TEMPORAL_NODES of them.
 */
export function testTemporal(): Promise<TestTemporal> {
  server ??=
    process.env.TEST_TEMPORAL === "server"
      ? startProductionServer("temporal_test", serverNodes())
      : startTestDevServer();
  return server;
}

function serverNodes(): number {
  const nodes = Number(process.env.TEST_TEMPORAL_NODES ?? 1);
  if (!Number.isInteger(nodes) || nodes < 1)
    throw new Error(
      `TEST_TEMPORAL_NODES must be a whole number of nodes, got "${process.env.TEST_TEMPORAL_NODES}"`,
    );
  return nodes;
}

/**
 * Kills the dev server at once (synchronous, for a process "exit" listener): a --parallel
 * worker keeps its server across the files it runs and has no later hook to stop it in.
 */
export function killTestDevServerNow(): void {
  if (devServerPid !== undefined) {
    try {
      process.kill(devServerPid, "SIGKILL");
    } catch {
      // gone already
    }
  }
  devServerPid = undefined;
}

let devServerPid: number | undefined;

export async function stopTestTemporal(): Promise<void> {
  if (server) await (await server).stop();
  server = undefined;
}

async function startTestDevServer(): Promise<TestTemporal> {
  const dir = await mkdtemp(path.join(tmpdir(), "etp-temporal-"));
  const server = await startDevServer({
    searchAttributes: searchAttributeCliArgs(),
    port: await freePort(),
    headless: true,
    logFile: path.join(dir, "server.log"),
  });
  devServerPid = server.process.pid;
  return {
    address: server.address,
    pids: async () => [server.process.pid!],
    stop: async () => {
      devServerPid = undefined;
      await server.stop();
    },
  };
}

const run = promisify(execFile);
const SCRIPT = fromRoot("scripts", "temporal-server.sh");

/** A server script's cluster: node K's frontend is `port + 50 * K`; `kill` sends SIGKILL to one node. */
export interface TemporalCluster extends TestTemporal {
  frontends: string[];
  kill(node: number): Promise<void>;
  restart(node: number): Promise<void>;
}

/**
 * Starts `nodes` nodes of the production Temporal server under `name` (its
 * databases dropped first), on a port range nothing else uses.
 */
export async function startProductionServer(name: string, nodes: number): Promise<TemporalCluster> {
  const port = await freeServerPort(nodes);
  const args = ["--name", name, "--port", String(port), "--nodes", String(nodes)];
  const { stdout } = await run("bash", [SCRIPT, "start", ...args, "--fresh"], { timeout: 900_000 });
  const frontends = Array.from({ length: nodes }, (_, k) => `127.0.0.1:${port + 50 * k}`);
  const pid = async (node: number) =>
    Number((await run("bash", [SCRIPT, "pid", ...args, "--node", String(node)])).stdout.trim());
  return {
    address: stdout.trim(),
    frontends,
    pids: () => Promise.all(frontends.map((_, k) => pid(k))),
    stop: async () => {
      await run("bash", [SCRIPT, "stop", "--name", name]);
    },
    kill: async (node) => {
      process.kill(await pid(node), "SIGKILL");
    },
    restart: async () => {
      await run("bash", [SCRIPT, "start", ...args], { timeout: 120_000 });
    },
  };
}

/**
 * A frontend port for `nodes` nodes of scripts/temporal-server.sh whose other
 * ports (membership at -300.., the rest at +1..+20 per node) are free too.
 */
export async function freeServerPort(nodes: number): Promise<number> {
  for (;;) {
    // Below Linux's ephemeral range (32768+), where outgoing connections take ports.
    const candidate = 20_000 + 10 * Math.floor(Math.random() * 1_000);
    const probes = [candidate - 300, candidate - 294, candidate, candidate + 1, candidate + 2, candidate + 6];
    const spans = Array.from({ length: nodes }, (_, k) => probes.map((p) => p + 50 * k)).flat();
    const free = await Promise.all([...spans, candidate + 10, candidate + 20].map(portIsFree));
    if (free.every(Boolean)) return candidate;
  }
}

/** Resolves once the workflow exists (consumers start workflows asynchronously after a publish). */
export async function waitForWorkflow(handle: WorkflowHandle, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await handle.describe();
      return;
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError) || Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
