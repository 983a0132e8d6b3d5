import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { processFamily } from "../../bench/support/proc.js";
import { freePort } from "./ports.js";
import { ServiceProcess } from "./process.js";

export interface RateLimitUnderTest {
  /** gRPC address for --ratelimit-addr. */
  grpcAddress: string;
  /** The service's statistics (debug port's /stats), by name. */
  stats(): Promise<Record<string, number>>;
  /** Sends a signal to the service's process (SIGSTOP / SIGCONT: a hanging service). */
  signal(signal: NodeJS.Signals): void;
  stop(): Promise<void>;
}

/** Our rate limit service (in-memory counters) with one rule file for the `webhooks` domain. */
export async function startRateLimitService(rulesYaml: string): Promise<RateLimitUnderTest> {
  const root = await mkdtemp(path.join(tmpdir(), "etp-rl-"));
  await mkdir(path.join(root, "config"));
  await writeFile(path.join(root, "config", "webhooks.yaml"), rulesYaml);
  const [port, grpcPort, debugPort] = [await freePort(), await freePort(), await freePort()];
  const proc = new ServiceProcess("ratelimit", [], {
    RUNTIME_ROOT: root,
    BACKEND_TYPE: "memory",
    HOST: "127.0.0.1",
    PORT: String(port),
    GRPC_HOST: "127.0.0.1",
    GRPC_PORT: String(grpcPort),
    DEBUG_HOST: "127.0.0.1",
    DEBUG_PORT: String(debugPort),
  });
  await proc.waitHealthy(`http://127.0.0.1:${port}/healthcheck`);
  return {
    grpcAddress: `127.0.0.1:${grpcPort}`,
    async stats() {
      const text = await (await fetch(`http://127.0.0.1:${debugPort}/stats`)).text();
      return Object.fromEntries(
        text
          .split("\n")
          .map((line) => line.split(": "))
          .filter((kv) => kv.length === 2)
          .map(([k, v]) => [k!, Number(v)]),
      );
    },
    signal: (signal) => {
      // The serving processes too (node:cluster children of the primary).
      if (proc.child.exitCode === null && proc.child.signalCode === null)
        for (const pid of processFamily(proc.child.pid!)) process.kill(pid, signal);
    },
    stop: async () => {
      await proc.stop();
    },
  };
}

/** Rules allowing `perSecond` sends a second per config. */
export const perConfigPerSecond = (perSecond: number) =>
  `domain: webhooks\ndescriptors:\n  - key: config_id\n    rate_limit: { unit: second, requests_per_unit: ${perSecond} }\n`;
