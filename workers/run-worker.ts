import express from "express";
import { setDeploymentSignatureHeaders } from "../activities/signature-headers.js";
import { healthHandler } from "../common/health.js";
import { listen } from "../common/http-server.js";
import { metricsHandler } from "../core/metrics.js";
import type { WebhooksOptions } from "../core/options.js";
import { healthChecks, startProcessContext } from "../core/process-context.js";
import { startDeliveryWorker } from "./delivery-worker.js";
import { startEventConsumer } from "./event-consumer.js";

/** `webhooks worker`: consumes events and runs delivery workflows and activities; serves /_healthcheck and /metrics. */
export async function runWorker(options: WebhooksOptions): Promise<void> {
  const ctx = await startProcessContext(options, "worker");
  setDeploymentSignatureHeaders(options.signatureHeaders);
  const worker = await startDeliveryWorker(ctx);
  const consumer = options.consume ? await startEventConsumer(ctx) : undefined;
  const app = express();
  app.get("/_healthcheck", healthHandler(healthChecks(ctx, worker, consumer)));
  app.get("/metrics", metricsHandler);
  const server = await listen(app, options.listen);
  ctx.shutdown.add("http server", () => server.close());
  ctx.logger.info({ listen: `${options.listen.host}:${server.port}` }, "worker health endpoint listening");
}
