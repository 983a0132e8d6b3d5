// RATELIMIT_PROCESSES=N: the service as N serving processes (node:cluster) that share
// the gRPC and HTTP listeners, so one machine's cores all answer calls; a Node process
// uses one. Each serving process is a whole service (rules, counter store connections,
// over-limit cache, health), like separate replicas behind one address. The primary
// only supervises and speaks for the whole: it starts the processes, replaces one that
// dies after it was serving, sums their statistics into the outputs (ratelimit/stats/process-relay.ts),
// serves the debug listener (primary-debug-server.ts) and stops everything gracefully
// on SIGTERM/SIGINT.

import type { Worker } from "node:cluster";
import type { Logger } from "../../common/logger.js";
import { superviseProcesses } from "../../common/process-supervisor.js";
import type { Listener } from "../server/http-server.js";
import { startStatsOutput } from "../server/stats-outputs.js";
import type { Settings } from "../settings/environment.js";
import { MergedStats, STATS_BATCH, type StatsBatch } from "../stats/process-relay.js";
import { StatsStore } from "../stats/store.js";
import { servingExecArgv } from "./heap-flags.js";
import { type Members, startPrimaryDebugServer } from "./primary-debug-server.js";

export const MEMBER_READY = "ratelimit:ready";
/** Tells a serving process which of the N it is (1-based), for its logs and `?process=`. */
export const SLOT_ENV = "RATELIMIT_PROCESS_SLOT";

export interface MemberReady {
  type: typeof MEMBER_READY;
  grpc: string;
  httpPort: number;
  debugPort: number;
}

export async function runPrimary(settings: Settings, logger: Logger): Promise<void> {
  const n = settings.processes;
  const merged = new MergedStats(new StatsStore(!settings.disableStats));
  const members: Members = new Map();
  let debug: Listener | undefined;
  let statsOutput: { pull?: Listener; close(): Promise<void> } | undefined;
  let firstReady: MemberReady | undefined;
  let allReady: () => void = () => {};
  const started = new Promise<void>((resolve) => {
    allReady = resolve;
  });

  const supervisor = superviseProcesses({
    processes: n,
    logger,
    one: "a service process",
    all: "the service processes",
    execArgv: servingExecArgv(process.execArgv),
    env: (slot) => ({ [SLOT_ENV]: String(slot) }),
    onMessage: (message, worker, slot, serving) => {
      const m = message as MemberReady | StatsBatch;
      if (m?.type === STATS_BATCH) merged.apply(worker.id, m);
      else if (m?.type === MEMBER_READY) {
        serving();
        members.set(slot, { worker, debugPort: m.debugPort });
        firstReady ??= m;
        if (members.size === n) allReady();
      }
    },
    onExit: (worker) => merged.forget(worker.id),
    // It never served: its own exit code says why (2 for an unusable setting).
    startFailureCode: (code) => (typeof code === "number" && code !== 0 ? code : 1),
    announceShutdown: (signal) =>
      logger.warn({ signal, processes: n }, "shutting down: health checks now fail, in-flight calls finish"),
    afterProcesses: async () => {
      // After the processes, so their last statistics reach the outputs' final flush.
      await Promise.all([debug?.close(), statsOutput?.close()]);
      logger.info("rate limit service stopped");
    },
  });

  await started;
  if (supervisor.stopping()) return;
  try {
    debug = await startPrimaryDebugServer(
      settings.debugHost,
      settings.debugPort,
      merged.store,
      members,
      logger,
    );
    statsOutput = await startStatsOutput(settings, merged.store, logger);
  } catch (err) {
    logger.error({ err: (err as Error).message }, "cannot start the debug or statistics listener");
    await supervisor.stop(1);
    return;
  }
  const ready = firstReady as MemberReady;
  logger.warn(
    {
      grpc: ready.grpc,
      http: `${settings.host}:${ready.httpPort}`,
      debug: `${settings.debugHost}:${debug.port}`,
      backend: settings.backendType,
      processes: n,
      ...(statsOutput.pull
        ? { pullStats: `${settings.pullStatsAddr.host}:${statsOutput.pull.port}${settings.pullStatsPath}` }
        : {}),
    },
    "rate limit service started",
  );
}
