import { createServer } from "node:net";
import { DefaultLogger, type LogLevel, Runtime } from "@temporalio/worker";
import type { Logger } from "../common/logger.js";
import { addMetricsSource, sdkMetricsReadFailures } from "../core/metrics.js";

// The Temporal SDK's runtime of a worker process: its logs as ours, and its own metrics (task
// slots, schedule-to-start latencies, sticky cache, polls) on /metrics beside the product's.
// The SDK's core computes them natively and serves them in the Prometheus format on a port of
// its own: it listens on loopback, and each scrape of /metrics reads it and appends its text.
// Nothing per task crosses into JavaScript (the SDK's buffered alternative would hand every
// update to the event loop, and drop updates when not drained in time: under load, when
// operators need them).

/** The SDK's metric names all start with this, the product's with `webhooks_`: one scrape never names a family twice. */
export const SDK_METRIC_PREFIX = "temporal_";
/** How long a scrape waits for the SDK's exporter before it serves the product's metrics alone. */
const READ_TIMEOUT_MS = 2_000;
/** The free port picked may be taken by another process before the exporter binds it: try again. */
const BIND_TRIES = 3;

/** The SDK's logs (worker, bundler, workflow code) as our structured logs; chatty below WARN unless debugging. */
export function sdkLogger(logger: Logger): DefaultLogger {
  const level = (logger.level === "trace" || logger.level === "debug" ? "DEBUG" : "WARN") as LogLevel;
  return new DefaultLogger(level, (e) => {
    const method =
      e.level === "TRACE" ? "trace" : (e.level.toLowerCase() as "debug" | "info" | "warn" | "error");
    logger[method]({ sdk: "temporal", ...e.meta }, e.message);
  });
}

let installed = false;

/**
 * Installs the SDK's runtime once per process, before its first worker connection: with
 * `metrics`, its Prometheus exporter on a free loopback port, read by every scrape. An
 * exporter that cannot start leaves the workers running without the SDK's metrics (logged).
 */
export async function installSdkRuntime(logger: Logger, metrics: boolean): Promise<void> {
  if (installed) return;
  installed = true;
  const base = { logger: sdkLogger(logger) };
  for (let tries = 1; metrics; tries++) {
    const port = await freeLoopbackPort();
    try {
      Runtime.install({ ...base, telemetryOptions: { metrics: exporterOptions(port) } });
      addMetricsSource(sdkMetricsReader(`http://127.0.0.1:${port}/metrics`, logger));
      logger.debug({ port }, "Temporal SDK metrics exporter listening on loopback");
      return;
    } catch (err) {
      const message = (err as Error).message;
      if (tries < BIND_TRIES && /in use/i.test(message)) continue;
      logger.error(
        { err: message },
        "the Temporal SDK's metrics exporter did not start: /metrics serves the product's metrics only",
      );
      break;
    }
  }
  Runtime.install(base);
}

/**
 * The schedule-to-start latencies are what workers scale on (docs/webhooks/scaling-workers.md):
 * the SDK's own buckets (0.1, 0.5, 1, 5, 10, 100, 1000 s) put a p95 of 2 s or of 40 s in one bucket.
 */
const SCHEDULE_TO_START_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

/** Prometheus conventions, as the product's metrics follow them: seconds, units and `_total` in the names. */
const exporterOptions = (port: number) => ({
  metricPrefix: SDK_METRIC_PREFIX,
  // One process, one runtime: the label would be the same on every series.
  attachServiceName: false,
  prometheus: {
    bindAddress: `127.0.0.1:${port}`,
    countersTotalSuffix: true,
    unitSuffix: true,
    useSecondsForDurations: true,
    histogramBucketOverrides: {
      workflow_task_schedule_to_start_latency: SCHEDULE_TO_START_BUCKETS,
      activity_schedule_to_start_latency: SCHEDULE_TO_START_BUCKETS,
    },
  },
});

/** Reads the exporter; "" when it does not answer (counted, and logged when the reason changes). */
function sdkMetricsReader(url: string, logger: Logger): () => Promise<string> {
  let lastError: string | undefined;
  return async () => {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(READ_TIMEOUT_MS) });
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      const text = await res.text();
      lastError = undefined;
      return text;
    } catch (err) {
      sdkMetricsReadFailures.inc();
      const message = (err as Error).message;
      if (message !== lastError)
        logger.warn({ err: message, url }, "could not read the Temporal SDK's metrics: served without them");
      lastError = message;
      return "";
    }
  };
}

function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
