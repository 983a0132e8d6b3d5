// The primary of a service run as N processes over node:cluster (the webhooks API's
// `serve --processes`, the rate limit service's RATELIMIT_PROCESSES): it starts one
// process per slot, replaces a process that dies after it was serving (in the same slot),
// stops everything when one fails to start (another would fail the same way: bad flags,
// an unreadable certificate, a port taken), and on SIGTERM/SIGINT asks every process to
// stop and waits for them; a second signal kills them.

import cluster, { type Worker } from "node:cluster";
import type { Logger } from "./logger.js";

export interface SupervisorOptions {
  processes: number;
  logger: Logger;
  /** One process in the logs, e.g. "an API process". */
  one: string;
  /** All of them in the logs, e.g. "the API processes". */
  all: string;
  /** Node's flags for the processes (default: the primary's own). */
  execArgv?: string[];
  /** Environment a slot's process gets on top of the primary's. */
  env?: (slot: number) => Record<string, string>;
  /** A message from the process in `slot`; `serving()` marks it as serving. */
  onMessage: (message: unknown, worker: Worker, slot: number, serving: () => void) => void;
  /** Called when a process ended, whatever the reason. */
  onExit?: (worker: Worker) => void;
  /** The primary's exit code when a process failed to start with `code`. */
  startFailureCode: (code: number | null) => number;
  /** Logs the first SIGTERM/SIGINT. */
  announceShutdown: (signal: NodeJS.Signals) => void;
  /** Runs once every process has ended, before the primary exits. */
  afterProcesses: () => Promise<void>;
}

export interface Supervisor {
  /** True once stopping began. */
  stopping(): boolean;
  /** Stops every process, runs `afterProcesses`, exits with `exitCode`. */
  stop(exitCode: number): Promise<void>;
}

export function superviseProcesses(o: SupervisorOptions): Supervisor {
  /** The process in each slot now, 1..N. */
  const workers = new Map<number, Worker>();
  let stopping = false;

  const stop = async (exitCode: number) => {
    if (stopping) return;
    stopping = true;
    await Promise.all(
      [...workers.values()].map(
        (w) =>
          new Promise<void>((resolve) => {
            if (w.isDead()) return resolve();
            w.once("exit", () => resolve());
            w.process.kill("SIGTERM");
          }),
      ),
    );
    await o.afterProcesses();
    process.exit(exitCode);
  };

  const fork = (slot: number) => {
    const worker = cluster.fork(o.env?.(slot));
    workers.set(slot, worker);
    let serving = false;
    worker.on("message", (m: unknown) =>
      o.onMessage(m, worker, slot, () => {
        serving = true;
      }),
    );
    worker.on("exit", (code, signal) => {
      o.onExit?.(worker);
      if (stopping) return;
      const fields = { process: slot, pid: worker.process.pid, code, signal };
      if (!serving) {
        o.logger.error(fields, `${o.one} exited while starting`);
        void stop(o.startFailureCode(code));
        return;
      }
      o.logger.error(fields, `${o.one} died: starting another`);
      fork(slot);
    });
  };

  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.on(signal, () => {
      if (stopping) {
        o.logger.warn({ signal }, `second signal while shutting down: killing ${o.all}`);
        for (const w of workers.values()) w.process.kill("SIGKILL");
        process.exit(1);
      }
      o.announceShutdown(signal);
      void stop(0);
    });
  }
  if (o.execArgv) cluster.setupPrimary({ execArgv: o.execArgv });
  for (let slot = 1; slot <= o.processes; slot++) fork(slot);
  return { stopping: () => stopping, stop };
}
