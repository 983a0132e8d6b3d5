import { randomBytes } from "node:crypto";
import { expect } from "chai";
import { Kafka, logLevel, type Producer } from "kafkajs";
import { deadLetters, deepEventText, eventually, lockConfigs, replayAll, sql } from "../support/poison.js";
import { Receiver } from "../support/receiver.js";
import { startWebhooks, type WebhooksUnderTest } from "../support/webhooks-server.js";

/** The poison-message test, smaller, on Kafka: one partition is handled in order, so isolation matters even more. */
describe("poison messages (Kafka)", function () {
  this.timeout(300_000);
  const suffix = randomBytes(4).toString("hex");
  const topic = `test-poison-${suffix}`;
  const receiverA = new Receiver();
  const receiverB = new Receiver();
  let api: WebhooksUnderTest;
  let producer: Producer;
  const SLOTS = 20;

  const publish = (value: string) => producer.send({ topic, messages: [{ value }] });
  const event = (ik: string, type = "COMMITTED_TRANSACTIONS") =>
    JSON.stringify({ idempotency_key: ik, app: "ledger", type, payload: { n: 1 } });

  before(async () => {
    await Promise.all([receiverA.start(), receiverB.start()]);
    producer = new Kafka({
      clientId: "poison-test",
      brokers: ["127.0.0.1:9092"],
      logLevel: logLevel.NOTHING,
    }).producer();
    await producer.connect();
    await publish(event("warm-up", "WARM_UP")); // creates the topic before the consumer subscribes
    api = await startWebhooks({
      worker: true,
      args: [
        ...["--broker", "kafka", "--broker-topics", topic, "--kafka-consumer-group", `poison-${suffix}`],
        ...["--audit-topic", "", "--storage-sqldb-statement-timeout", "300ms"],
        ...[
          "--broker-max-deliveries",
          "3",
          "--broker-redelivery-backoff",
          "2s",
          "--broker-stuck-after",
          "2s",
        ],
      ],
    });
  });
  after(async () => {
    await Promise.all([receiverA.stop(), receiverB.stop()]);
    await producer?.disconnect();
    await api?.stop();
  });

  it("delivers the valid events past deep payloads and an unusable config, bounds the retries of a blocked offset, and replays", async () => {
    const create = async (endpoint: string, eventTypes: string[]) =>
      (await api.call("POST", "/configs", { endpoint, eventTypes })).body.data as { id: string };
    await create(receiverA.url, ["ledger.committed_transactions", "ledger.payouts"]);
    const b = await create(receiverB.url, ["ledger.payouts"]);
    await sql(api, "UPDATE configs SET endpoint = 'not a url' WHERE id = $1", [b.id]);

    for (let i = 0; i < SLOTS; i++) {
      await publish(event(`valid-${i}`));
      await publish(deepEventText(`deep-${i}`));
      await publish(event(`payout-${i}`, "PAYOUTS"));
    }
    await receiverA.waitFor(2 * SLOTS, 120_000);
    const toA = receiverA.requests.map((r) => JSON.parse(r.body).idempotency_key);
    expect(toA.filter((k) => k.startsWith("valid-")).sort()).to.deep.equal(
      Array.from({ length: SLOTS }, (_, i) => `valid-${i}`).sort(),
    );
    await eventually(
      "dead letters of the poison",
      async () => (await deadLetters(api)).length === 2 * SLOTS,
      30_000,
    );
    const poison = await deadLetters(api);
    expect(poison.filter((r) => r.config_id === null && /MAX_EVENT_DEPTH/.test(r.reason))).to.have.length(
      SLOTS,
    );
    expect(poison.filter((r) => r.config_id === b.id && /is not a URL/.test(r.reason))).to.have.length(SLOTS);
    expect(poison.every((r) => r.kind === "permanent" && r.delivery_count === 1)).to.equal(true);
    expect((await api.call("GET", "/_healthcheck")).status).to.equal(200);

    // A blocked config lookup: each offset is tried 3 times, 2 s apart, then dead-lettered; meanwhile the partition waits.
    const lock = await lockConfigs(api);
    let stuck: string | undefined;
    try {
      for (let i = 0; i < 3; i++) await publish(event(`blocked-${i}`));
      await eventually(
        "health reports the consumer stuck",
        async () => {
          const r = await api.call("GET", "/_healthcheck");
          if (r.status === 503 && /stuck/.test(r.body.checks.broker)) stuck = r.body.checks.broker;
          return stuck !== undefined;
        },
        30_000,
      );
      await eventually(
        "the blocked offsets dead-lettered",
        async () => (await deadLetters(api)).filter((r) => r.kind === "exhausted").length === 3,
        60_000,
      );
    } finally {
      await lock.release();
    }
    console.log(`      health while blocked: ${stuck}`);
    expect(stuck).to.match(
      /^error: Kafka consumer group poison-\w+ is stuck: \d+ messages waiting and none settled for \d+s$/,
    );
    const exhausted = (await deadLetters(api)).filter((r) => r.kind === "exhausted");
    for (const r of exhausted) {
      expect(r).to.include({ delivery_count: 3, config_id: null });
      expect(r.reason).to.equal(
        "still failing after 3 deliveries: the database did not finish a statement within 300ms (--storage-sqldb-statement-timeout)",
      );
    }
    await publish(event("after-the-block"));
    await receiverA.waitFor(2 * SLOTS + 1, 60_000);
    expect(JSON.parse(receiverA.requests.at(-1)!.body).idempotency_key).to.equal("after-the-block");
    await eventually(
      "health back to ok",
      async () => (await api.call("GET", "/_healthcheck")).status === 200,
      30_000,
    );

    // Fix B, replay its dead letters and the blocked ones.
    await sql(api, "UPDATE configs SET endpoint = $2 WHERE id = $1", [b.id, receiverB.url]);
    const pending = (await api.call("GET", "/dead-letters?status=pending&pageSize=1000")).body.cursor
      .data as {
      id: string;
      position: string;
      reason: string;
    }[];
    expect(pending.every((d) => d.position.startsWith(`kafka:${topic}:0:`))).to.equal(true);
    await replayAll(
      api,
      pending.filter((d) => !/MAX_EVENT_DEPTH/.test(d.reason)).map((d) => d.id),
    );
    await receiverB.waitFor(SLOTS, 60_000);
    await receiverA.waitFor(2 * SLOTS + 4, 60_000);
    const replayedToA = receiverA.requests.slice(-3).map((r) => JSON.parse(r.body).idempotency_key);
    expect(replayedToA.sort()).to.deep.equal(["blocked-0", "blocked-1", "blocked-2"]);
    const deep = pending.find((d) => /MAX_EVENT_DEPTH/.test(d.reason))!;
    expect((await api.call("POST", `/dead-letters/${deep.id}/replay`)).status).to.equal(409);
  });
});
