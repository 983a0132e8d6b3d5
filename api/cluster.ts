import { AggregatorRegistry } from "prom-client";
import { createLogger } from "../common/logger.js";
import { superviseProcesses } from "../common/process-supervisor.js";
import type { WebhooksOptions } from "../core/options.js";

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

export async function runPrimary(options: WebhooksOptions, processes: number): Promise<void> {
  const logger = createLogger("webhooks-serve", options.logLevel);
  const aggregator = new AggregatorRegistry();
  let ready = 0;
  superviseProcesses({
    processes,
    logger,
    one: "an API process",
    all: "the API processes",
    onMessage: (message, worker, _slot, serving) => {
      const m = message as Message;
      if (m?.type === READY) {
        serving();
        if (++ready === processes)
          logger.info({ listen: `${options.listen.host}:${m.port}`, processes }, "webhooks API listening");
      } else if (m?.type === METRICS_REQUEST) {
        aggregator.clusterMetrics().then(
          (text) => worker.isConnected() && worker.send({ type: METRICS_RESPONSE, id: m.id, text }),
          (err: Error) =>
            worker.isConnected() && worker.send({ type: METRICS_RESPONSE, id: m.id, error: err.message }),
        );
      }
    },
    startFailureCode: () => 1,
    announceShutdown: (signal) => logger.info({ signal, processes }, "shutting down"),
    afterProcesses: async () => logger.info("stopped"),
  });
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
