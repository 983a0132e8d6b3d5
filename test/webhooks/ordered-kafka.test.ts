import { randomBytes } from "node:crypto";
import { expect } from "chai";
import { Kafka, logLevel, type Producer } from "kafkajs";
import { ensureKafka, KAFKA_BROKERS, startKafkaWebhooks } from "../support/kafka.js";
import { type Received, Receiver } from "../support/receiver.js";
import type { WebhooksUnderTest } from "../support/webhooks-server.js";

const suffix = () => randomBytes(4).toString("hex");
const KEYS = 6;
const PER_KEY = 30;
const PARTITIONS = 3;
/** The event of each key whose first POST is answered 500 (its key waits for the retry). */
const FAILS_ONCE = 7;

/** What the receiver reads of a test event. */
const eventOf = (r: Received) => (JSON.parse(r.body) as { payload: { key: string; seq: number } }).payload;

/**
 * Ordered delivery fed by Kafka: each ordering key's events are published with that key as the
 * Kafka message key (so they share a partition, in offset order) on a topic of several
 * partitions, and the receiver sees each key's events one at a time in that order, a failing
 * head holding its key until its retry succeeds (that it holds no other key is tested over
 * NATS and POST /events in ordered-delivery.test.ts).
 */
describe("ordered delivery from a Kafka topic of several partitions", function () {
  this.timeout(240_000);
  const topic = `test-ordered-${suffix()}`;
  const type = `t_${suffix()}`;
  let kafka: Kafka;
  let producer: Producer;
  let api: WebhooksUnderTest;
  let receiver: Receiver;
  /** Every POST the receiver answered, in arrival order. */
  const answers: { key: string; seq: number; status: number }[] = [];

  before(async function () {
    this.timeout(300_000);
    await ensureKafka();
    kafka = new Kafka({ clientId: "ordered-kafka-test", brokers: KAFKA_BROKERS, logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic, numPartitions: PARTITIONS }], waitForLeaders: true });
    await admin.disconnect();
    producer = kafka.producer();
    await producer.connect();

    receiver = await new Receiver().start();
    const failedOnce = new Set<string>();
    receiver.respond = (r, res) => {
      const { key, seq } = eventOf(r);
      const status = seq === FAILS_ONCE && !failedOnce.has(key) ? 500 : 200;
      if (status === 500) failedOnce.add(key);
      answers.push({ key, seq, status });
      res.writeHead(status).end();
    };
    api = await startKafkaWebhooks(topic, `webhooks-ordered-${suffix()}`);
  });
  after(async () => {
    await producer?.disconnect();
    await api?.stop();
    await receiver?.stop();
  });

  it("delivers each key's events in its partition's order, one at a time, a failing head holding its key until its retry succeeds", async () => {
    const created = await api.call("POST", "/configs", {
      endpoint: receiver.url,
      eventTypes: [`ledger.${type}`],
      ordering: { enabled: true },
    });
    expect(created.status, created.text).to.equal(200);

    const keys = Array.from({ length: KEYS }, (_, k) => `customer-${k}`);
    // Interleaved across keys, as a platform would publish them; each key's events in sequence.
    for (let seq = 0; seq < PER_KEY; seq++) {
      await producer.send({
        topic,
        messages: keys.map((key) => ({
          key,
          value: JSON.stringify({
            idempotency_key: `${key}-${seq}`,
            date: new Date().toISOString(),
            app: "ledger",
            version: "v2",
            type: type.toUpperCase(),
            ordering_key: key,
            payload: { key, seq },
          }),
        })),
      });
    }
    const admin = kafka.admin();
    await admin.connect();
    const partitionsUsed = (await admin.fetchTopicOffsets(topic)).filter((p) => p.high !== "0").length;
    await admin.disconnect();
    expect(partitionsUsed, "the keys spread over several partitions").to.be.greaterThan(1);

    const succeeded = () => answers.filter((a) => a.status === 200).length;
    const deadline = Date.now() + 180_000;
    while (succeeded() < KEYS * PER_KEY) {
      if (Date.now() > deadline)
        throw new Error(`${succeeded()} of ${KEYS * PER_KEY} delivered:\n${api.process.output.slice(-4000)}`);
      await new Promise((r) => setTimeout(r, 200));
    }

    // Every POST of a key, the failed one included, in arrival order: each event once and in
    // sequence, except the one answered 500, which is sent again before the next event goes.
    const expected = Array.from({ length: PER_KEY }, (_, seq) => seq).flatMap((seq) =>
      seq === FAILS_ONCE ? [`${seq}:500`, `${seq}:200`] : [`${seq}:200`],
    );
    for (const key of keys) {
      const seen = answers.filter((a) => a.key === key).map((a) => `${a.seq}:${a.status}`);
      expect(seen, `POSTs of ${key}`).to.deep.equal(expected);
    }
  });
});
