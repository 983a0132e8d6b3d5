// tags: @long (over 45 s: among the first files the parallel suite starts)
import { randomBytes } from "node:crypto";
import { Client, Connection } from "@temporalio/client";
import { expect } from "chai";
import { connect, type NatsConnection } from "nats";
import { CpuHog } from "../support/cpu-hog.js";
import { auditDeliveries, type DeliveryAudit, waitUntilDelivered } from "../support/delivery-audit.js";
import { HealthWatch } from "../support/health-watch.js";
import {
  expectDeliveredThroughOutage,
  failEvenEventsOnce,
  outageFigures,
  POSTGRES_OUTAGES,
  publishThroughOutage,
} from "../support/outage-checks.js";
import { PrivatePostgres } from "../support/private-postgres.js";
import { Receiver } from "../support/receiver.js";
import { startWebhooks, type WebhooksUnderTest } from "../support/webhooks-server.js";

const EVENTS = 200;
/** Busy loops beside the loaded variant: one per core of a two-core CI machine. */
const HOG_LOOPS = 2;

/**
 * The database the service uses (a PostgreSQL cluster of the test's own, so the shared
 * one stays up for other tests) restarted, or hung, while 200 events are delivered to two
 * configs: first sends (local ones among them), retries waiting on their timer, messages
 * being consumed.
 */
describe("PostgreSQL restarted or hung under 200 events in flight to two configs", function () {
  this.timeout(180_000);
  let postgres: PrivatePostgres;
  let receiver: Receiver;
  let steady: Receiver;
  let api: WebhooksUnderTest;
  let nats: NatsConnection;
  let temporal: Client;
  let watch: HealthWatch;
  let hog: CpuHog | undefined;
  const topic = `events-${randomBytes(4).toString("hex")}`;
  const stream = `TEST_${randomBytes(4).toString("hex").toUpperCase()}`;

  afterEach(async () => {
    await hog?.stop();
    await watch?.stop();
    await api?.stop();
    await receiver?.stop();
    await steady?.stop();
    await temporal?.connection.close();
    await (await nats?.jetstreamManager())?.streams.delete(stream).catch(() => {});
    await nats?.close();
    await postgres?.resume().catch(() => {}); // a failed hung case must not leave it stopped
    await postgres?.destroy();
  });

  for (const [outage, runOutage] of Object.entries(POSTGRES_OUTAGES))
    it(`${outage}: loses nothing, duplicates no attempt, ends every delivery, and health reports the outage`, () =>
      survives(runOutage));
  // The promise must not depend on the machine's speed: on a loaded machine slow POSTs
  // still meet writes that fail, and each attempt is still POSTed once. (The restart: its
  // writes fail, where a hung database's wait.)
  // Slower there, beside the rest of the parallel suite: more time to end every delivery,
  // the same checks.
  it(`restarted beside ${HOG_LOOPS} busy loops: still POSTs each attempt once and loses nothing`, function () {
    this.timeout(420_000);
    return survives(POSTGRES_OUTAGES.restarted!, HOG_LOOPS, 300_000);
  });

  async function survives(
    runOutage: (pg: PrivatePostgres) => Promise<void>,
    hogLoops = 0,
    deliveredWithinMs = 120_000,
  ): Promise<void> {
    hog = hogLoops ? new CpuHog().start(hogLoops) : undefined;
    postgres = await PrivatePostgres.create();
    receiver = await new Receiver().start();
    // Even events fail their first POST (500), so they wait for a retry across the outage.
    // Answers take 300 ms, so some fifteen POSTs are in flight whenever the database stops.
    const { answered, failedOnce } = failEvenEventsOnce(receiver, 300);
    // A second config's receiver answers every POST 200 in 300 ms. That config never cools
    // down, so its first sends stay local first sends of the workflow worker (the default
    // --send-mode local-first) all along, and some are answered while the database is out.
    steady = await new Receiver().start();
    steady.respond = (_req, res) => setTimeout(() => res.writeHead(200).end("ok"), 300);
    api = await startWebhooks({
      worker: true,
      db: { url: postgres.url, name: "postgres", drop: async () => {} },
      args: [
        "--auto-migrate",
        "--broker-topics",
        topic,
        "--nats-stream",
        stream,
        "--nats-consumer",
        `test-${stream.toLowerCase()}`,
        "--audit-topic",
        "",
        "--min-backoff-delay",
        "2s",
        "--max-backoff-delay",
        "2s",
        // A message whose starts fail during the outage comes back after 2 s, then every 5 s.
        "--broker-redelivery-backoff",
        "2s,5s",
      ],
    });
    const configIds = [await createConfig(receiver.url), await createConfig(steady.url)];
    nats = await connect({ servers: "nats://127.0.0.1:4222" });
    temporal = new Client({ connection: await Connection.connect({ address: api.temporalAddress }) });
    watch = new HealthWatch(`${api.url}/_healthcheck`).start();

    // 200 events at a steady 50/s; the database goes down when half are out.
    const run = randomBytes(3).toString("hex");
    const keys = Array.from({ length: EVENTS }, (_, i) => `pg-${run}-${i}`);
    const t: Record<string, number> = await publishThroughOutage(
      nats.jetstream(),
      topic,
      keys,
      "failure",
      () => runOutage(postgres),
    );

    const audits = [
      () => auditDeliveries(postgres.url, configIds[0]!, keys, receiver.requests, (r) => answered.has(r)),
      () => auditDeliveries(postgres.url, configIds[1]!, keys, steady.requests, () => true),
    ];
    const results: DeliveryAudit[] = [];
    for (const audit of audits) results.push(await waitUntilDelivered(audit, EVENTS, deliveredWithinMs));
    t.ended = Date.now();
    // Health must come back by itself; give it a bounded while after the deliveries ended.
    await watch.stopOnceHealthy(t.up!, 30_000);

    const count = (line: string) => api.process.output.split(line).length - 1;
    const figures = {
      ...outageFigures(watch, "database", { stop: t.stop!, up: t.up!, ended: t.ended! }, results[0]!),
      firstPostsFailedOnPurpose: failedOnce.size,
      steadyAttemptRows: results[1]!.rows,
      steadyDuplicatePosts: results[1]!.duplicatePosts,
      rowsNotWrittenAtFirstAfterAPost: count("attempt row not written after the POST"),
      rowsWrittenAfterTheDatabaseCameBack: count("attempt row written after the database came back"),
    };
    console.log(`      figures: ${JSON.stringify(figures)}`);

    for (const [i, result] of results.entries())
      await expectDeliveredThroughOutage({
        result,
        events: EVENTS,
        watch,
        check: "database",
        stop: t.stop!,
        up: t.up!,
        temporal,
        workflowIds: keys.map((key) => `delivery:${configIds[i]}:${key}`),
      });
  }

  async function createConfig(endpoint: string): Promise<string> {
    const created = await api.call("POST", "/configs", { endpoint, eventTypes: ["ledger.failure"] });
    expect(created.status, created.text).to.equal(200);
    return created.body.data.id;
  }
});
