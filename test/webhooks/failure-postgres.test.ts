// tags: @long (over 45 s: among the first files the parallel suite starts)
import { randomBytes } from "node:crypto";
import { Client, Connection } from "@temporalio/client";
import { expect } from "chai";
import { connect, type NatsConnection } from "nats";
import { auditDeliveries, waitUntilDelivered } from "../support/delivery-audit.js";
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

/**
 * The database the service uses (a PostgreSQL cluster of the test's own, so the shared
 * one stays up for other tests) restarted, or hung, while 200 deliveries are in flight:
 * first sends, retries waiting on their timer, messages being consumed.
 */
describe("PostgreSQL restarted or hung under 200 deliveries in flight", function () {
  this.timeout(180_000);
  let postgres: PrivatePostgres;
  let receiver: Receiver;
  let api: WebhooksUnderTest;
  let nats: NatsConnection;
  let temporal: Client;
  let watch: HealthWatch;
  const topic = `events-${randomBytes(4).toString("hex")}`;
  const stream = `TEST_${randomBytes(4).toString("hex").toUpperCase()}`;

  afterEach(async () => {
    await watch?.stop();
    await api?.stop();
    await receiver?.stop();
    await temporal?.connection.close();
    await (await nats?.jetstreamManager())?.streams.delete(stream).catch(() => {});
    await nats?.close();
    await postgres?.resume().catch(() => {}); // a failed hung case must not leave it stopped
    await postgres?.destroy();
  });

  for (const [outage, runOutage] of Object.entries(POSTGRES_OUTAGES))
    it(`${outage}: loses nothing, duplicates no attempt, ends every delivery, and health reports the outage`, () =>
      survives(runOutage));

  async function survives(runOutage: (pg: PrivatePostgres) => Promise<void>): Promise<void> {
    postgres = await PrivatePostgres.create();
    receiver = await new Receiver().start();
    // Even events fail their first POST (500), so they wait for a retry across the outage.
    // Answers take 300 ms, so some fifteen POSTs are in flight whenever the database stops.
    const { answered, failedOnce } = failEvenEventsOnce(receiver, 300);
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
    const created = await api.call("POST", "/configs", {
      endpoint: receiver.url,
      eventTypes: ["ledger.failure"],
    });
    expect(created.status, created.text).to.equal(200);
    const configId: string = created.body.data.id;
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

    const audit = () =>
      auditDeliveries(postgres.url, configId, keys, receiver.requests, (r) => answered.has(r));
    const result = await waitUntilDelivered(audit, EVENTS, 120_000);
    t.ended = Date.now();
    // Health must come back by itself; give it a bounded while after the deliveries ended.
    await watch.stopOnceHealthy(t.up!, 30_000);

    const figures = {
      ...outageFigures(watch, "database", { stop: t.stop!, up: t.up!, ended: t.ended! }, result),
      firstPostsFailedOnPurpose: failedOnce.size,
      rowsWrittenAfterTheDatabaseCameBack:
        api.process.output.split("attempt row written after the database came back").length - 1,
    };
    console.log(`      figures: ${JSON.stringify(figures)}`);

    await expectDeliveredThroughOutage({
      result,
      events: EVENTS,
      watch,
      check: "database",
      stop: t.stop!,
      up: t.up!,
      temporal,
      workflowIds: keys.map((key) => `delivery:${configId}:${key}`),
    });
  }
});
