// RATELIMIT_PROCESSES=N: the service as N serving processes (node:cluster) that share
// the gRPC and HTTP listeners, so one machine's cores all answer calls; a Node process
// uses one. Each serving process is a whole service (rules, counter store connections,
// over-limit cache, health), like separate replicas behind one address. The primary
// only supervises and speaks for the whole: it starts the processes, replaces one that
// dies after it was serving, sums their statistics into the outputs (stats-relay.ts),
// serves the debug listener (primary-debug-server.ts) and stops everything gracefully
// on SIGTERM/SIGINT.

import cluster, { type Worker } from "node:cluster";
import type { Logger } from "../common/logger.js";
import type { Listener } from "./http-server.js";
import { startPrimaryDebugServer } from "./primary-debug-server.js";
import { startStatsOutput } from "./runner.js";
import type { Settings } from "./settings.js";
import { StatsStore } from "./stats.js";
import { MergedStats, STATS_BATCH, type StatsBatch } from "./stats-relay.js";

export const MEMBER_READY = "ratelimit:ready";
/** Tells a serving process which of the N it is (1-based), for its logs and `?process=`. */
export const SLOT_ENV = "RATELIMIT_PROCESS_SLOT";

export interface MemberReady {
  type: typeof MEMBER_READY;
  grpc: string;
  httpPort: number;
  debugPort: number;
}

/** The serving processes by slot (1..N); a replacement takes its predecessor's slot. */
export type Members = Map<number, { worker: Worker; debugPort?: number }>;

export async function runPrimary(settings: Settings, logger: Logger): Promise<void> {
  const n = settings.processes;
  const merged = new MergedStats(new StatsStore(!settings.disableStats));
  const members: Members = new Map();
  let stopping = false;
  let debug: Listener | undefined;
  let statsOutput: { pull?: Listener; close(): Promise<void> } | undefined;
  let firstReady: MemberReady | undefined;
  let allReady: () => void = () => {};
  const started = new Promise<void>((resolve) => {
    allReady = resolve;
  });

  const stop = async (exitCode: number) => {
    if (stopping) return;
    stopping = true;
    await Promise.all(
      [...members.values()].map(
        ({ worker }) =>
          new Promise<void>((resolve) => {
            if (worker.isDead()) return resolve();
            worker.once("exit", () => resolve());
            worker.process.kill("SIGTERM");
          }),
      ),
    );
    // After the processes, so their last statistics reach the outputs' final flush.
    await Promise.all([debug?.close(), statsOutput?.close()]);
    logger.info("rate limit service stopped");
    process.exit(exitCode);
  };

  const fork = (slot: number) => {
    const worker = cluster.fork({ [SLOT_ENV]: String(slot) });
    const member: { worker: Worker; debugPort?: number } = { worker };
    members.set(slot, member);
    worker.on("message", (m: MemberReady | StatsBatch) => {
      if (m?.type === STATS_BATCH) merged.apply(worker.id, m);
      else if (m?.type === MEMBER_READY) {
        member.debugPort = m.debugPort;
        firstReady ??= m;
        if ([...members.values()].every((x) => x.debugPort !== undefined)) allReady();
      }
    });
    worker.on("exit", (code, signal) => {
      merged.forget(worker.id);
      if (stopping) return;
      if (member.debugPort === undefined) {
        // It never served: another would fail the same way (unreadable certificate, port taken).
        logger.error(
          { process: slot, pid: worker.process.pid, code, signal },
          "a service process exited while starting",
        );
        void stop(typeof code === "number" && code !== 0 ? code : 1);
        return;
      }
      logger.error(
        { process: slot, pid: worker.process.pid, code, signal },
        "a service process died: starting another",
      );
      fork(slot);
    });
  };

  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.on(signal, () => {
      if (stopping) {
        logger.warn({ signal }, "second signal while shutting down: killing the service processes");
        for (const { worker } of members.values()) worker.process.kill("SIGKILL");
        process.exit(1);
      }
      logger.warn({ signal, processes: n }, "shutting down: health checks now fail, in-flight calls finish");
      void stop(0);
    });
  }

  for (let slot = 1; slot <= n; slot++) fork(slot);
  await started;
  if (stopping) return;
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
    await stop(1);
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
