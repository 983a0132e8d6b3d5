import { listen } from "../common/http-server.js";
import { startDeliveryWorker } from "../workers/delivery-worker.js";
import { healthChecks, startRuntime } from "../workers/runtime.js";
import type { WebhooksSettings } from "../workers/settings.js";
import { createApp } from "./app.js";

/** `webhooks serve`: the configs API, and with --worker the delivery worker in the same process. */
export async function runServe(settings: WebhooksSettings): Promise<void> {
  const rt = await startRuntime(settings, "serve");
  const worker = settings.worker ? await startDeliveryWorker(rt) : undefined;
  const app = createApp({ prisma: rt.db.prisma, logger: rt.logger, checks: healthChecks(rt, worker) });
  const server = await listen(app, settings.listen);
  rt.shutdown.add("http server", () => server.close());
  rt.logger.info(
    { listen: `${settings.listen.host}:${server.port}`, worker: Boolean(worker) },
    "webhooks API listening",
  );
}
