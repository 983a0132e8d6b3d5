// tags: @long (over 45 s: among the first files the parallel suite starts)
import { randomBytes } from "node:crypto";
import { Client, Connection } from "@temporalio/client";
import { expect } from "chai";
import { connect, type NatsConnection } from "nats";
import { auditDeliveries, waitUntilDelivered } from "../support/delivery-audit.js";
import { HealthWatch } from "../support/health-watch.js";
import { expectDeliveredThroughOutage, NATS_OUTAGES, outageFigures } from "../support/outage-checks.js";
import { PrivateNats } from "../support/private-nats.js";
import { Receiver } from "../support/receiver.js";
import { startWebhooks, type WebhooksUnderTest } from "../support/webhooks-server.js";

const EVENTS = 300;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The broker (a NATS JetStream server of the test's own, so the shared one stays up for
 * other tests) restarted with its store kept, or hung, while a publisher
 * publishes 300 events at a steady rate, retrying a failed publish with the same
 * `Nats-Msg-Id` as a producer should.
 */
describe("NATS restarted (store kept) or hung while events are being published", function () {
  this.timeout(180_000);
  let nats: PrivateNats;
  let receiver: Receiver;
  let api: WebhooksUnderTest;
  let publisher: NatsConnection;
  let temporal: Client;
  let watch: HealthWatch;
  const topic = `events-${randomBytes(4).toString("hex")}`;
  const stream = `TEST_${randomBytes(4).toString("hex").toUpperCase()}`;

  afterEach(async () => {
    await watch?.stop();
    await api?.stop();
    await receiver?.stop();
    await temporal?.connection.close();
    await publisher?.close();
    nats?.signal("SIGCONT"); // a failed hung case must not leave it stopped
    await nats?.destroy();
  });

  for (const [outage, runOutage] of Object.entries(NATS_OUTAGES))
    it(`${outage}: loses nothing, duplicates no attempt, ends every delivery, and health reports the broker`, () =>
      survives(runOutage));

  async function survives(runOutage: (nats: PrivateNats) => Promise<void>): Promise<void> {
    nats = await PrivateNats.create();
    receiver = await new Receiver().start();
    api = await startWebhooks({
      worker: true,
      args: [
        "--nats-url",
        nats.url,
        "--broker-topics",
        topic,
        "--nats-stream",
        stream,
        "--nats-consumer",
        `test-${stream.toLowerCase()}`,
        "--audit-topic",
        "",
        "--broker-redelivery-backoff",
        "2s,5s",
      ],
    });
    const created = await api.call("POST", "/configs", {
      endpoint: receiver.url,
      eventTypes: ["ledger.broker"],
    });
    expect(created.status, created.text).to.equal(200);
    const configId: string = created.body.data.id;
    temporal = new Client({ connection: await Connection.connect({ address: api.temporalAddress }) });
    publisher = await connect({ servers: nats.url, maxReconnectAttempts: -1, reconnectTimeWait: 250 });
    const js = publisher.jetstream();
    watch = new HealthWatch(`${api.url}/_healthcheck`).start();

    // A producer's publish: on an error (no answer, no responders while the stream
    // recovers) the same message id again, which JetStream deduplicates.
    const counts = { retries: 0, deduplicated: 0 };
    const publish = async (key: string, i: number) => {
      const data = JSON.stringify({ idempotency_key: key, app: "ledger", type: "broker", payload: { i } });
      for (const deadline = Date.now() + 60_000; ; ) {
        try {
          const ack = await js.publish(topic, data, { msgID: key, timeout: 1000 });
          if (ack.duplicate) counts.deduplicated++;
          return;
        } catch (err) {
          if (Date.now() > deadline) throw new Error(`publishing ${key}: ${(err as Error).message}`);
          counts.retries++;
          await sleep(250);
        }
      }
    };

    // 300 events at a steady 50/s, each published on its own tick; NATS goes down after 100.
    const run = randomBytes(3).toString("hex");
    const keys = Array.from({ length: EVENTS }, (_, i) => `nats-${run}-${i}`);
    const t: Record<string, number> = {};
    const publishes: Promise<void>[] = [];
    let restart: Promise<void> | undefined;
    for (const [i, key] of keys.entries()) {
      if (i === EVENTS / 3)
        restart = (async () => {
          t.stop = Date.now();
          await runOutage(nats);
          t.up = Date.now();
        })();
      publishes.push(publish(key, i));
      await sleep(20);
    }
    await restart;
    await Promise.all(publishes);
    t.published = Date.now();

    const audit = () => auditDeliveries(api.db.url, configId, keys, receiver.requests, () => true);
    const result = await waitUntilDelivered(audit, EVENTS, 120_000);
    t.ended = Date.now();
    await watch.stopOnceHealthy(t.up!, 30_000);

    // Each event once in the stream: a retried publish was never stored a second time.
    const stored = (await (await publisher.jetstreamManager()).streams.info(stream)).state.messages;
    const figures = {
      ...outageFigures(watch, "broker", { stop: t.stop!, up: t.up!, ended: t.ended! }, result),
      allPublishedAfterUpMs: t.published! - t.up!,
      publishRetries: counts.retries,
      deduplicatedByJetStream: counts.deduplicated,
      stored,
      posts: receiver.requests.length,
      // Messages handled before the restart whose acknowledgement never reached the server.
      consumedAgain: api.process.output.split('"redelivery":true').length - 1,
    };
    console.log(`      figures: ${JSON.stringify(figures)}`);

    expect(stored, "messages in the stream").to.equal(EVENTS);
    await expectDeliveredThroughOutage({
      result,
      events: EVENTS,
      watch,
      check: "broker",
      stop: t.stop!,
      up: t.up!,
      temporal,
      workflowIds: keys.map((key) => `delivery:${configId}:${key}`),
    });
  }
});
