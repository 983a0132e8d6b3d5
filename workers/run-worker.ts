import express from "express";
import { healthHandler } from "../common/health.js";
import { listen } from "../common/http-server.js";
import { startDeliveryWorker } from "./delivery-worker.js";
import { startEventConsumer } from "./event-consumer.js";
import { metricsHandler } from "./metrics.js";
import { healthChecks, startRuntime } from "./runtime.js";
import type { WebhooksSettings } from "./settings.js";

/** `webhooks worker`: consumes events and runs delivery workflows and activities; serves /_healthcheck and /metrics. */
export async function runWorker(settings: WebhooksSettings): Promise<void> {
  const rt = await startRuntime(settings, "worker");
  const worker = await startDeliveryWorker(rt);
  const consumer = settings.consume ? await startEventConsumer(rt) : undefined;
  const app = express();
  app.get("/_healthcheck", healthHandler(healthChecks(rt, worker, consumer)));
  app.get("/metrics", metricsHandler);
  const server = await listen(app, settings.listen);
  rt.shutdown.add("http server", () => server.close());
  rt.logger.info({ listen: `${settings.listen.host}:${server.port}` }, "worker health endpoint listening");
}
