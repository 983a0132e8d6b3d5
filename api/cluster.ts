import cluster, { type Worker } from "node:cluster";
import { AggregatorRegistry } from "prom-client";
import { createLogger } from "../common/logger.js";
import type { WebhooksSettings } from "../workers/settings.js";

/**
 * `serve --processes N`: the API served by N processes sharing the listening
 * port (node:cluster hands each new connection to the next process), so one
 * machine's cores all serve requests; a Node process uses one. The primary
 * only supervises: it starts the processes, restarts one that dies after it
 * was serving, stops all on SIGTERM/SIGINT, and answers their requests for the
 * metrics of all of them, so a scrape of /metrics sees the sum whichever
 * process it reaches. Each process keeps its own pool, caches (coherent through
 * the database, as between separate instances) and Temporal client.
 */

export const READY = "webhooks:ready";
export const METRICS_REQUEST = "webhooks:metrics-request";
export const METRICS_RESPONSE = "webhooks:metrics-response";

interface Message {
  type?: string;
  id?: number;
  port?: number;
}

export async function runPrimary(settings: WebhooksSettings, processes: number): Promise<void> {
  const logger = createLogger("webhooks-serve", settings.logLevel);
  const aggregator = new AggregatorRegistry();
  let stopping = false;
  let ready = 0;
  const serving = new Set<Worker>();

  const fork = () => {
    const worker = cluster.fork();
    worker.on("message", (m: Message) => {
      if (m?.type === READY) {
        serving.add(worker);
        if (++ready === processes)
          logger.info({ listen: `${settings.listen.host}:${m.port}`, processes }, "webhooks API listening");
      } else if (m?.type === METRICS_REQUEST) {
        aggregator.clusterMetrics().then(
          (text) => worker.isConnected() && worker.send({ type: METRICS_RESPONSE, id: m.id, text }),
          (err: Error) =>
            worker.isConnected() && worker.send({ type: METRICS_RESPONSE, id: m.id, error: err.message }),
        );
      }
    });
    worker.on("exit", (code, signal) => {
      const wasServing = serving.delete(worker);
      if (stopping) return;
      if (!wasServing) {
        // It never served: starting more would fail the same way (bad flags, database down).
        logger.error({ pid: worker.process.pid, code, signal }, "an API process exited while starting");
        void stop(1);
        return;
      }
      logger.error({ pid: worker.process.pid, code, signal }, "an API process died: starting another");
      fork();
    });
  };

  const stop = async (exitCode: number) => {
    if (stopping) return;
    stopping = true;
    const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
    await Promise.all(
      workers.map(
        (w) =>
          new Promise<void>((resolve) => {
            if (w.isDead()) return resolve();
            w.once("exit", () => resolve());
            w.process.kill("SIGTERM");
          }),
      ),
    );
    logger.info("stopped");
    process.exit(exitCode);
  };

  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.on(signal, () => {
      if (stopping) {
        logger.warn({ signal }, "second signal while shutting down: killing the API processes");
        for (const w of Object.values(cluster.workers ?? {})) w?.process.kill("SIGKILL");
        process.exit(1);
      }
      logger.info({ signal, processes }, "shutting down");
      void stop(0);
    });
  }
  for (let i = 0; i < processes; i++) fork();
}

let nextRequest = 0;

/** In an API process of a cluster: the metrics of every process, summed by the primary. */
export function clusterMetrics(): Promise<string> {
  const id = nextRequest++;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      process.off("message", onMessage);
      reject(new Error("the primary process did not answer with the metrics within 10s"));
    }, 10_000);
    const onMessage = (m: Message & { text?: string; error?: string }) => {
      if (m?.type !== METRICS_RESPONSE || m.id !== id) return;
      clearTimeout(timer);
      process.off("message", onMessage);
      if (m.error !== undefined) reject(new Error(m.error));
      else resolve(m.text ?? "");
    };
    process.on("message", onMessage);
    process.send?.({ type: METRICS_REQUEST, id });
  });
}
