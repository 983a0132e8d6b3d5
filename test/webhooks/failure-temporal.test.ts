import { randomBytes } from "node:crypto";
import { Client, Connection } from "@temporalio/client";
import { expect } from "chai";
import { connect, type NatsConnection } from "nats";
import { auditDeliveries, waitUntilDelivered } from "../support/delivery-audit.js";
import { HealthWatch } from "../support/health-watch.js";
import {
  expectDeliveredThroughOutage,
  failEvenEventsOnce,
  HUNG_MS,
  outageFigures,
  publishThroughOutage,
} from "../support/outage-checks.js";
import { Receiver } from "../support/receiver.js";
import { startWebhooks, type WebhooksUnderTest } from "../support/webhooks-server.js";
import { WipeableTemporal } from "../support/wipeable-temporal.js";

const EVENTS = 200;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The Temporal server (a dev server of the test's own, so the shared one keeps serving
 * other tests) hung (SIGSTOP) while 200 deliveries are in flight: starts from the
 * consumer, first sends, retries waiting on their timer. Its connections stay open and
 * nothing answers; once it resumes, every delivery must end, each attempt sent once.
 * (A Temporal that loses its state is the reconciliation tests' case.)
 */
describe("Temporal hung (SIGSTOP) under 200 deliveries in flight", function () {
  this.timeout(180_000);
  let temporalServer: WipeableTemporal;
  let receiver: Receiver;
  let api: WebhooksUnderTest;
  let nats: NatsConnection;
  let temporal: Client;
  let watch: HealthWatch;
  const topic = `events-${randomBytes(4).toString("hex")}`;
  const stream = `TEST_${randomBytes(4).toString("hex").toUpperCase()}`;

  after(async () => {
    await watch?.stop();
    temporalServer?.signal("SIGCONT"); // a failed run must not leave it stopped
    await api?.stop();
    await receiver?.stop();
    await temporal?.connection.close();
    await (await nats?.jetstreamManager())?.streams.delete(stream).catch(() => {});
    await nats?.close();
    await temporalServer?.stop();
  });

  it("loses nothing, duplicates no attempt, ends every delivery, and health reports Temporal", async () => {
    temporalServer = await new WipeableTemporal().start();
    receiver = await new Receiver().start();
    // Even events fail their first POST (500), so they wait for a retry across the hang.
    const { answered, failedOnce } = failEvenEventsOnce(receiver, 100);
    api = await startWebhooks({
      worker: true,
      temporalAddress: temporalServer.address,
      args: [
        ...[
          "--broker-topics",
          topic,
          "--nats-stream",
          stream,
          "--nats-consumer",
          `test-${stream.toLowerCase()}`,
        ],
        ...["--audit-topic", ""],
        ...["--min-backoff-delay", "2s", "--max-backoff-delay", "2s"],
        // A message whose start fails during the hang comes back after 2 s, then every 5 s.
        ...["--broker-redelivery-backoff", "2s,5s"],
      ],
    });
    const created = await api.call("POST", "/configs", {
      endpoint: receiver.url,
      eventTypes: ["ledger.hung"],
    });
    expect(created.status, created.text).to.equal(200);
    const configId: string = created.body.data.id;
    nats = await connect({ servers: "nats://127.0.0.1:4222" });
    temporal = new Client({ connection: await Connection.connect({ address: temporalServer.address }) });
    watch = new HealthWatch(`${api.url}/_healthcheck`).start();

    // 200 events at a steady 50/s; Temporal hangs when half are out.
    const run = randomBytes(3).toString("hex");
    const keys = Array.from({ length: EVENTS }, (_, i) => `hung-${run}-${i}`);
    const t: Record<string, number> = await publishThroughOutage(
      nats.jetstream(),
      topic,
      keys,
      "hung",
      async () => {
        temporalServer.signal("SIGSTOP");
        await sleep(HUNG_MS);
        temporalServer.signal("SIGCONT");
      },
    );

    const audit = () =>
      auditDeliveries(api.db.url, configId, keys, receiver.requests, (r) => answered.has(r));
    const result = await waitUntilDelivered(audit, EVENTS, 120_000);
    t.ended = Date.now();
    await watch.stopOnceHealthy(t.up!, 30_000);

    const figures = {
      ...outageFigures(watch, "temporal", { stop: t.stop!, up: t.up!, ended: t.ended! }, result),
      firstPostsFailedOnPurpose: failedOnce.size,
    };
    console.log(`      figures: ${JSON.stringify(figures)}`);

    await expectDeliveredThroughOutage({
      result,
      events: EVENTS,
      watch,
      check: "temporal",
      stop: t.stop!,
      up: t.up!,
      temporal,
      workflowIds: keys.map((key) => `delivery:${configId}:${key}`),
    });
  });
});
