// tags: @long (over 45 s: among the first files the parallel suite starts)
import { randomBytes } from "node:crypto";
import { expect } from "chai";
import { connect, type NatsConnection } from "nats";
import { POSTGRES_OUTAGES } from "../support/outage-checks.js";
import { PrivatePostgres } from "../support/private-postgres.js";
import { Receiver } from "../support/receiver.js";
import { startWebhooks, type WebhooksUnderTest } from "../support/webhooks-server.js";

const KEYS = 6;
const PER_KEY = 40;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The database restarted while an ordered config's events are consumed: the events whose
 * hand-over failed go back to NATS and come again seconds later, and none of their key's
 * later events may be handed over before them (workers/ordered-lanes.ts holds the key).
 */
describe("ordered delivery keeps each key's order across a PostgreSQL restart or hang", function () {
  this.timeout(180_000);
  let postgres: PrivatePostgres;
  let receiver: Receiver;
  let api: WebhooksUnderTest;
  let nats: NatsConnection;
  const topic = `events-${randomBytes(4).toString("hex")}`;
  const stream = `TEST_${randomBytes(4).toString("hex").toUpperCase()}`;

  afterEach(async () => {
    await api?.stop();
    await receiver?.stop();
    await (await nats?.jetstreamManager())?.streams.delete(stream).catch(() => {});
    await nats?.close();
    await postgres?.resume().catch(() => {}); // a failed hang case must not leave it stopped
    await postgres?.destroy();
  });

  /** A key's events in the order they first reached the receiver. */
  const firstArrivals = (key: number) => {
    const seen: number[] = [];
    for (const r of receiver.requests) {
      const { payload } = JSON.parse(r.body) as { payload: { key: number; seq: number } };
      if (payload.key === key && !seen.includes(payload.seq)) seen.push(payload.seq);
    }
    return seen;
  };

  for (const [outage, runOutage] of Object.entries(POSTGRES_OUTAGES))
    it(`${outage}: hands every key's events over in stream order, none lost`, () => inOrder(runOutage));

  async function inOrder(runOutage: (pg: PrivatePostgres) => Promise<void>): Promise<void> {
    postgres = await PrivatePostgres.create();
    receiver = await new Receiver().start();
    api = await startWebhooks({
      worker: true,
      db: { url: postgres.url, name: "postgres", drop: async () => {} },
      args: [
        "--auto-migrate",
        ...[
          "--broker-topics",
          topic,
          "--nats-stream",
          stream,
          "--nats-consumer",
          `ordered-pg-${stream.toLowerCase()}`,
        ],
        ...["--audit-topic", ""],
        ...["--min-backoff-delay", "1s", "--max-backoff-delay", "2s"],
        // A message whose start fails comes back after 2 s, then every 5 s.
        ...["--broker-redelivery-backoff", "2s,5s"],
      ],
    });
    const created = await api.call("POST", "/configs", {
      endpoint: receiver.url,
      eventTypes: ["ledger.ordered_pg"],
      ordering: { enabled: true },
    });
    expect(created.status, created.text).to.equal(200);
    nats = await connect({ servers: "nats://127.0.0.1:4222" });
    const js = nats.jetstream();

    // About 100 events/s, one key after the other; the database goes down when half are out.
    let restart: Promise<void> | undefined;
    for (let seq = 1; seq <= PER_KEY; seq++) {
      if (seq === PER_KEY / 2) restart = runOutage(postgres);
      for (let key = 0; key < KEYS; key++) {
        await js.publish(
          topic,
          JSON.stringify({
            idempotency_key: `opg-${key}-${seq}`,
            app: "ledger",
            type: "ORDERED_PG",
            ordering_key: `key-${key}`,
            payload: { key, seq },
          }),
        );
        await sleep(10);
      }
    }
    await restart;

    const complete = () =>
      Array.from({ length: KEYS }, (_, k) => firstArrivals(k).length).every((n) => n === PER_KEY);
    for (const deadline = Date.now() + 120_000; !complete(); ) {
      if (Date.now() > deadline) break;
      await sleep(250);
    }
    const lines = api.process.output.split("\n");
    const failed = lines.filter((l) => l.includes("message handling failed"));
    const held = failed.filter((l) => l.includes("waits for its redelivery"));
    console.log(
      `      ordered across the database outage: ${failed.length} hand-overs failed, ${held.length} of them held behind an earlier event of their key`,
    );
    if (failed.length > 0) console.log(`      e.g. ${failed[0]}`);
    for (let key = 0; key < KEYS; key++)
      expect(firstArrivals(key), `key ${key}`).to.deep.equal(
        Array.from({ length: PER_KEY }, (_, i) => i + 1),
      );
  }
});
