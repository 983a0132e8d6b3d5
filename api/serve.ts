import { listen } from "../common/http-server.js";
import { openPublisher } from "../workers/broker/index.js";
import type { BrokerPublisher } from "../workers/broker/types.js";
import { startDeliveryWorker } from "../workers/delivery-worker.js";
import { startEventConsumer } from "../workers/event-consumer.js";
import { healthChecks, startRuntime } from "../workers/runtime.js";
import type { WebhooksSettings } from "../workers/settings.js";
import { createApp } from "./app.js";
import { createReplayer } from "./replay.js";

/** `webhooks serve`: the configs API, and with --worker the delivery worker in the same process. */
export async function runServe(settings: WebhooksSettings): Promise<void> {
  const rt = await startRuntime(settings, "serve");
  const worker = settings.worker ? await startDeliveryWorker(rt) : undefined;
  const consumer = settings.worker && settings.consume ? await startEventConsumer(rt) : undefined;
  let audit: { publisher: BrokerPublisher; topic: string } | undefined;
  if (settings.auditTopic) {
    const publisher = await openPublisher(settings, rt.logger);
    rt.shutdown.add("audit publisher", () => publisher.close());
    audit = { publisher, topic: settings.auditTopic };
  }
  const app = createApp({
    prisma: rt.db.prisma,
    pool: rt.db.pool,
    logger: rt.logger,
    checks: healthChecks(rt, worker, consumer),
    auth: settings.auth,
    audit,
    replay: createReplayer(rt, rt.db.prisma),
    sendTimeoutMs: settings.sendTimeout,
  });
  if (settings.auth) rt.logger.info({ jwks: settings.auth.jwksUrl }, "bearer-token authentication on");
  const server = await listen(app, settings.listen);
  rt.shutdown.add("http server", () => server.close());
  rt.logger.info(
    { listen: `${settings.listen.host}:${server.port}`, worker: Boolean(worker) },
    "webhooks API listening",
  );
}
