import cluster from "node:cluster";
import { AggregatorRegistry } from "prom-client";
import { answerClientErrors } from "../common/http-client-errors.js";
import { isLoopback, listen } from "../common/http-server.js";
import { withoutCredentials } from "../common/redact.js";
import type { BrokerPublisher } from "../core/broker/types.js";
import { observeBlockedOrderingKeys, registry } from "../core/metrics.js";
import { openPublisher } from "../core/open-broker.js";
import type { WebhooksOptions } from "../core/options.js";
import { healthChecks, startProcessContext } from "../core/process-context.js";
import { startDeliveryWorker } from "../workers/delivery-worker.js";
import { destinationClients } from "../workers/destination-clients.js";
import { startEventConsumer } from "../workers/event-consumer.js";
import { countBlockedKeys } from "../workers/ordering-keys.js";
import { createApp } from "./app.js";
import { clusterMetrics, READY, runPrimary } from "./cluster.js";
import { createDeadLetterReplayer } from "./dead-letter-replay.js";
import { createDeliveryControl } from "./delivery-control.js";
import { eventIngest } from "./event-ingest.js";
import { createRecoveries } from "./recovery.js";
import { createReplayer } from "./replay.js";

/**
 * `webhooks serve`: the configs API, and with --worker the delivery worker in
 * the same process; with --processes N, N processes serving the API (cluster.ts).
 */
export async function runServe(options: WebhooksOptions): Promise<void> {
  const processes = options.processes ?? 1;
  if (processes > 1 && cluster.isPrimary) return runPrimary(options, processes);
  if (cluster.isWorker) {
    // Answers the primary's requests for this process's metrics.
    new AggregatorRegistry();
    AggregatorRegistry.setRegistries([registry]);
  }
  const ctx = await startProcessContext(options, "serve");
  // One set of OAuth tokens and broker connections for the process: its deliveries and test deliveries.
  const clients = destinationClients(ctx);
  const worker = options.worker ? await startDeliveryWorker(ctx, clients) : undefined;
  const consumer = options.worker && options.consume ? await startEventConsumer(ctx) : undefined;
  let audit: { publisher: BrokerPublisher; topic: string } | undefined;
  if (options.auditTopic) {
    const publisher = await openPublisher(options, ctx.logger);
    ctx.shutdown.add("audit publisher", () => publisher.close());
    audit = { publisher, topic: options.auditTopic };
  }
  observeBlockedOrderingKeys(() => countBlockedKeys(ctx.db.pool));
  const app = createApp({
    prisma: ctx.db.prisma,
    pool: ctx.db.pool,
    dbTimeouts: ctx.db.timeouts,
    logger: ctx.logger,
    checks: healthChecks(ctx, worker, consumer),
    listenHost: options.listen.host,
    auth: options.auth,
    portal: options.portal,
    quotas: options.quotas,
    audit,
    replay: createReplayer(ctx, ctx.db.prisma),
    deliveries: createDeliveryControl(ctx.temporal, ctx.db.prisma, ctx.logger),
    egress: ctx.egress,
    secrets: ctx.secrets,
    oauthTokens: clients.oauthTokens,
    brokers: clients.brokers,
    replayDeadLetter: createDeadLetterReplayer(ctx, ctx.db.prisma),
    recoveries: createRecoveries(ctx, ctx.db.prisma),
    ingest: eventIngest(ctx),
    catalog: ctx.catalog,
    sendTimeoutMs: options.sendTimeout,
    signatureHeaders: options.signatureHeaders,
    metrics: cluster.isWorker ? clusterMetrics : undefined,
  });
  if (options.auth)
    ctx.logger.info({ jwks: withoutCredentials(options.auth.jwksUrl) }, "bearer-token authentication on");
  else if (!isLoopback(options.listen.host))
    // Only with --insecure-no-auth (cmd/webhooks.ts refuses to start otherwise).
    ctx.logger.warn(
      { listen: options.listen.host },
      "authentication is OFF and the API listens beyond this machine (--insecure-no-auth): anyone who reaches it can read secrets and change configs",
    );
  const server = await listen(app, options.listen);
  // Malformed HTTP framing never reaches express: answer it in the API's error format too.
  answerClientErrors(server.server, (_status, message) => ({
    contentType: "application/json; charset=utf-8",
    body: JSON.stringify({ errorCode: "VALIDATION", errorMessage: message }),
  }));
  ctx.shutdown.add("http server", () => server.close());
  if (cluster.isWorker) {
    process.send?.({ type: READY, port: server.port });
    ctx.logger.info({ port: server.port }, "API process serving");
    return;
  }
  ctx.logger.info(
    { listen: `${options.listen.host}:${server.port}`, worker: Boolean(worker) },
    "webhooks API listening",
  );
}
