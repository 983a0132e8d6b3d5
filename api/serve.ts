import cluster from "node:cluster";
import { AggregatorRegistry } from "prom-client";
import { OAuthTokens } from "../activities/oauth-tokens.js";
import { answerClientErrors } from "../common/http-client-errors.js";
import { isLoopback, listen } from "../common/http-server.js";
import { withoutCredentials } from "../common/redact.js";
import type { BrokerPublisher } from "../core/broker/types.js";
import { observeBlockedOrderingKeys, registry } from "../core/metrics.js";
import { openPublisher } from "../core/open-broker.js";
import type { WebhooksOptions } from "../core/options.js";
import { healthChecks, startProcessContext } from "../core/process-context.js";
import { startDeliveryWorker } from "../workers/delivery-worker.js";
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
  const rt = await startProcessContext(options, "serve");
  // One cache of endpoints' OAuth tokens for the process: its deliveries and test deliveries.
  const oauthTokens = new OAuthTokens(rt.egress);
  const worker = options.worker ? await startDeliveryWorker(rt, oauthTokens) : undefined;
  const consumer = options.worker && options.consume ? await startEventConsumer(rt) : undefined;
  let audit: { publisher: BrokerPublisher; topic: string } | undefined;
  if (options.auditTopic) {
    const publisher = await openPublisher(options, rt.logger);
    rt.shutdown.add("audit publisher", () => publisher.close());
    audit = { publisher, topic: options.auditTopic };
  }
  observeBlockedOrderingKeys(() => countBlockedKeys(rt.db.pool));
  const app = createApp({
    prisma: rt.db.prisma,
    pool: rt.db.pool,
    dbTimeouts: rt.db.timeouts,
    logger: rt.logger,
    checks: healthChecks(rt, worker, consumer),
    auth: options.auth,
    portal: options.portal,
    audit,
    replay: createReplayer(rt, rt.db.prisma),
    deliveries: createDeliveryControl(rt.temporal, rt.db.prisma, rt.logger),
    egress: rt.egress,
    secrets: rt.secrets,
    oauthTokens,
    replayDeadLetter: createDeadLetterReplayer(rt, rt.db.prisma),
    recoveries: createRecoveries(rt, rt.db.prisma),
    ingest: eventIngest(rt),
    catalog: rt.catalog,
    sendTimeoutMs: options.sendTimeout,
    metrics: cluster.isWorker ? clusterMetrics : undefined,
  });
  if (options.auth)
    rt.logger.info({ jwks: withoutCredentials(options.auth.jwksUrl) }, "bearer-token authentication on");
  else if (!isLoopback(options.listen.host))
    rt.logger.warn(
      { listen: options.listen.host },
      "authentication is OFF and the API listens beyond this machine: anyone who reaches it can read secrets and change configs; pass --auth-jwks-url, or --listen 127.0.0.1:PORT",
    );
  const server = await listen(app, options.listen);
  // Malformed HTTP framing never reaches express: answer it in the API's error format too.
  answerClientErrors(server.server, (_status, message) => ({
    contentType: "application/json; charset=utf-8",
    body: JSON.stringify({ errorCode: "VALIDATION", errorMessage: message }),
  }));
  rt.shutdown.add("http server", () => server.close());
  if (cluster.isWorker) {
    process.send?.({ type: READY, port: server.port });
    rt.logger.info({ port: server.port }, "API process serving");
    return;
  }
  rt.logger.info(
    { listen: `${options.listen.host}:${server.port}`, worker: Boolean(worker) },
    "webhooks API listening",
  );
}
