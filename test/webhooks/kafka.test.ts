import { randomBytes } from "node:crypto";
import { Client, Connection } from "@temporalio/client";
import { expect } from "chai";
import { createLogger } from "../../common/logger.js";
import { KafkaConsumer, KafkaPublisher } from "../../core/broker/kafka.js";
import type { BrokerMessage } from "../../core/broker/types.js";
import { ensureKafka, KAFKA_BROKERS, startKafkaWebhooks } from "../support/kafka.js";
import { freePort } from "../support/ports.js";
import { Receiver, signedWith } from "../support/receiver.js";
import { waitForWorkflow } from "../support/temporal.js";
import type { WebhooksUnderTest } from "../support/webhooks-server.js";

const BROKERS = KAFKA_BROKERS;
const logger = createLogger("kafka-test", "warn");
const suffix = () => randomBytes(4).toString("hex");

/** Records every message a consumer hands over; `fail` decides whether the handler throws. */
class Inbox {
  readonly messages: (BrokerMessage & { json: unknown })[] = [];
  fail: (msg: BrokerMessage) => boolean = () => false;

  readonly handler = async (msg: BrokerMessage): Promise<void> => {
    this.messages.push({ ...msg, json: JSON.parse(Buffer.from(msg.data).toString("utf8")) });
    if (this.fail(msg)) throw new Error("handler failed on purpose");
  };

  /** Resolves once `count` messages arrived in total. */
  async waitFor(count: number, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.messages.length < count) {
      if (Date.now() > deadline) {
        throw new Error(`expected ${count} messages within ${timeoutMs} ms, got ${this.messages.length}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

describe("Kafka consumer and publisher (real broker on 127.0.0.1:9092)", function () {
  this.timeout(120_000);
  let publisher: KafkaPublisher;
  const consumers: KafkaConsumer[] = [];

  const consumer = (topic: string, groupId: string) => {
    const c = new KafkaConsumer({ brokers: BROKERS, groupId, topics: [topic], logger });
    consumers.push(c);
    return c;
  };

  before(async function () {
    this.timeout(300_000);
    await ensureKafka();
    publisher = await KafkaPublisher.connect({ brokers: BROKERS, logger });
  });
  afterEach(async () => {
    await Promise.all(consumers.splice(0).map((c) => c.stop()));
  });
  after(async () => {
    await publisher?.close();
  });

  it("hands a published message to the handler with its topic and data", async () => {
    const topic = `test-kafka-${suffix()}`;
    const inbox = new Inbox();
    await consumer(topic, `group-${suffix()}`).start(inbox.handler);
    await publisher.publish(topic, { hello: "world", n: 1 });
    await publisher.publish(topic, { hello: "again", n: 2 });
    await inbox.waitFor(2);
    expect(inbox.messages.map((m) => [m.topic, m.json, m.deliveryCount])).to.deep.equal([
      [topic, { hello: "world", n: 1 }, 1],
      [topic, { hello: "again", n: 2 }, 1],
    ]);
    expect(inbox.messages[0]!.data).to.be.instanceOf(Uint8Array);
  });

  it("delivers again a message whose handler threw, then commits it for the group", async () => {
    const topic = `test-kafka-${suffix()}`;
    const group = `group-${suffix()}`;
    const inbox = new Inbox();
    let failures = 0;
    inbox.fail = () => failures++ === 0;
    const first = consumer(topic, group);
    await first.start(inbox.handler);
    await publisher.publish(topic, { id: "redelivered" });
    await inbox.waitFor(2);
    expect(inbox.messages.map((m) => [m.json, m.deliveryCount])).to.deep.equal([
      [{ id: "redelivered" }, 1],
      [{ id: "redelivered" }, 2],
    ]);
    await first.stop();

    // A new member of the same group starts after the committed offset: it sees
    // only what is published afterwards.
    const later = new Inbox();
    await consumer(topic, group).start(later.handler);
    await publisher.publish(topic, { id: "marker" });
    await later.waitFor(1);
    await new Promise((r) => setTimeout(r, 500));
    expect(later.messages.map((m) => [m.json, m.deliveryCount])).to.deep.equal([[{ id: "marker" }, 1]]);
    expect(inbox.messages).to.have.length(2);
  });

  it("reports healthy while connected and not before it started", async () => {
    const topic = `test-kafka-${suffix()}`;
    const c = consumer(topic, `group-${suffix()}`);
    let err: Error | undefined;
    await c.healthy().catch((e) => {
      err = e;
    });
    expect(err?.message).to.match(/not started/);
    await c.start(new Inbox().handler);
    await c.healthy();
  });

  it("fails to start against an unreachable broker with an error naming the address", async () => {
    const address = `127.0.0.1:${await freePort()}`;
    const quiet = createLogger("kafka-test", "silent");
    const c = new KafkaConsumer({
      brokers: [address],
      groupId: `g-${suffix()}`,
      topics: ["t"],
      logger: quiet,
    });
    consumers.push(c);
    let consumerErr: Error | undefined;
    await c.start(new Inbox().handler).catch((e) => {
      consumerErr = e;
    });
    expect(consumerErr?.message).to.include(`cannot reach Kafka at ${address}`);
    let publisherErr: Error | undefined;
    await KafkaPublisher.connect({ brokers: [address], logger: quiet }).catch((e) => {
      publisherErr = e;
    });
    expect(publisherErr?.message).to.include(`cannot reach Kafka at ${address}`);
  });

  describe("end to end: webhooks serve --worker --broker kafka", () => {
    const SECRET = Buffer.alloc(24, 5).toString("base64");
    const topic = `test-events-${suffix()}`;
    let api: WebhooksUnderTest;
    let temporal: Client;
    let receiver: Receiver;

    before(async function () {
      this.timeout(120_000);
      receiver = await new Receiver().start();
      api = await startKafkaWebhooks(topic, `webhooks-test-${suffix()}`);
      temporal = new Client({ connection: await Connection.connect({ address: api.temporalAddress }) });
    });
    after(async () => {
      await receiver?.stop();
      await api?.stop();
      await temporal?.connection.close();
    });

    // biome-ignore lint/suspicious/noExplicitAny: the workflow result is checked field by field
    const result = async (workflowId: string, timeoutMs = 30_000): Promise<any> => {
      const handle = temporal.workflow.getHandle(workflowId);
      await waitForWorkflow(handle, timeoutMs);
      // Bounded, and with the service's output when it does not finish.
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(new Error(`${workflowId} did not finish in time:\n${api.process.output.slice(-6000)}`)),
          60_000,
        );
      });
      try {
        return await Promise.race([handle.result(), timeout]);
      } finally {
        clearTimeout(timer);
      }
    };

    it("delivers one signed POST for an event published to the Kafka topic", async () => {
      const type = `t_${suffix()}`;
      const path = `/hook-${type}`;
      const created = await api.call("POST", "/configs", {
        endpoint: receiver.url.replace("/hook", path),
        eventTypes: [`ledger.${type}`],
        secret: SECRET,
      });
      expect(created.status, created.text).to.equal(200);
      const config = created.body.data as { id: string };
      const event = {
        idempotency_key: `ik-${suffix()}`,
        date: new Date().toISOString(),
        app: "ledger",
        version: "v2",
        type: type.toUpperCase(),
        payload: { ledger: "main", amount: 7 },
      };
      await publisher.publish(topic, event);

      const done = await result(`delivery:${config.id}:${event.idempotency_key}`);
      expect(done).to.include({ status: "success", attempts: 1, lastStatusCode: 200 });
      await new Promise((r) => setTimeout(r, 300));
      const requests = receiver.requests.filter((r) => r.path === path);
      expect(requests).to.have.length(1);
      const req = requests[0]!;
      expect(JSON.parse(req.body)).to.deep.include({
        idempotency_key: event.idempotency_key,
        type: `ledger.${type}`,
        payload: { ledger: "main", amount: 7 },
      });
      expect(req.headers["svc-webhook-id"]).to.equal(done.webhookId);
      expect(signedWith(SECRET, req)).to.equal(true);
      await api.process.waitForOutput(/"topic":"test-events-[0-9a-f]+".*"started":1/);
    });
  });
});
