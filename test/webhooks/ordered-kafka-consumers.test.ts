// tags: @needs-services @long (the Kafka broker scripts/kafka.sh starts; over 45 s)
import { randomBytes } from "node:crypto";
import { expect } from "chai";
import { Kafka, logLevel } from "kafkajs";
import { ensureKafka, KAFKA_BROKERS } from "../support/kafka.js";
import type { ServiceProcess } from "../support/process.js";
import { type Received, Receiver } from "../support/receiver.js";
import { startWebhooks, type WebhooksUnderTest } from "../support/webhooks-server.js";
import { startWorkerProcess } from "../support/worker-process.js";

const suffix = () => randomBytes(4).toString("hex");
const KEYS = 20;
const PER_KEY = 50;
const PARTITIONS = 6;
const CONSUMERS = 3;

const eventOf = (r: Received) => (JSON.parse(r.body) as { payload: { key: string; seq: number } }).payload;

/**
 * Three worker processes consume one Kafka topic as one consumer group while one of them is
 * SIGKILLed twice (and started again): a key lives on one partition, which one member reads
 * at a time, so each key's deliveries are numbered in offset order whichever member handed
 * them over. Each key's events reach the receiver in order, none lost, and an event is POSTed
 * again only right after itself (the POST in flight at a kill, sent again before anything later).
 */
describe("ordered delivery from Kafka with three consuming processes, one killed twice", function () {
  this.timeout(420_000);
  const topic = `test-ordered-group-${suffix()}`;
  const group = `webhooks-ordered-group-${suffix()}`;
  let api: WebhooksUnderTest;
  let receiver: Receiver;
  const workers: ServiceProcess[] = [];
  const killedOutput: string[] = [];

  before(async function () {
    this.timeout(300_000);
    await ensureKafka();
    const admin = new Kafka({
      clientId: "ordered-group-test",
      brokers: KAFKA_BROKERS,
      logLevel: logLevel.NOTHING,
    }).admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic, numPartitions: PARTITIONS }], waitForLeaders: true });
    await admin.disconnect();
    api = await startWebhooks({ args: ["--audit-topic", ""] });
    receiver = await new Receiver().start();
    for (let i = 0; i < CONSUMERS; i++)
      workers.push(await startWorkerProcess(api, { topic, kafkaGroup: group }));
  });
  after(async () => {
    for (const w of workers) await w.stop();
    await receiver?.stop();
    await api?.stop();
  });

  it(`keeps each of ${KEYS} keys in order across the group's members and two kills`, async () => {
    const created = await api.call("POST", "/configs", {
      endpoint: receiver.url,
      eventTypes: ["ledger.ordered_group"],
      ordering: { enabled: true },
    });
    expect(created.status, created.text).to.equal(200);
    const producer = new Kafka({
      clientId: "ordered-group-producer",
      brokers: KAFKA_BROKERS,
      logLevel: logLevel.NOTHING,
    }).producer();
    await producer.connect();
    const keys = Array.from({ length: KEYS }, (_, k) => `member-key-${k}`);
    const publish = async (from: number, to: number) => {
      for (let seq = from; seq < to; seq++)
        await producer.send({
          topic,
          messages: keys.map((key) => ({
            key,
            value: JSON.stringify({
              idempotency_key: `${key}-${seq}`,
              date: new Date().toISOString(),
              app: "ledger",
              version: "v2",
              type: "ORDERED_GROUP",
              ordering_key: key,
              payload: { key, seq },
            }),
          })),
        });
    };
    const received = () => new Set(receiver.requests.map((r) => `${eventOf(r).key}:${eventOf(r).seq}`)).size;
    const waitFor = async (n: number, what: string) => {
      const end = Date.now() + 240_000;
      while (received() < n) {
        if (Date.now() > end) throw new Error(`${what}: ${received()} of ${n} events arrived`);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    // Published while the group works, a kill of member 0 in each third.
    await publish(0, PER_KEY / 2);
    for (const at of [KEYS * 10, KEYS * 30]) {
      await waitFor(at, "before a kill");
      await workers[0]!.stop("SIGKILL");
      killedOutput.push(workers[0]!.output);
      if (at === KEYS * 10) await publish(PER_KEY / 2, PER_KEY);
      workers[0] = await startWorkerProcess(api, { topic, kafkaGroup: group });
    }
    await producer.disconnect();
    await waitFor(KEYS * PER_KEY, "every event");

    for (const key of keys) {
      const posts = receiver.requests.filter((r) => eventOf(r).key === key).map((r) => eventOf(r).seq);
      // An event sent again comes right after its first POST; nothing later goes before it.
      const collapsed = posts.filter((seq, i) => i === 0 || posts[i - 1] !== seq);
      expect(collapsed, `POSTs of ${key}`).to.deep.equal(Array.from({ length: PER_KEY }, (_, s) => s));
    }
    const repeats = receiver.requests.length - KEYS * PER_KEY;
    expect(repeats, "POSTs sent again (at most one in flight per key per kill)").to.be.at.most(KEYS * 2);
  });
});
