// tags: @needs-services (RabbitMQ on :5672, besides Kafka and NATS)
import { randomBytes } from "node:crypto";
import { connect as amqpConnect, type ChannelModel, type ConsumeMessage } from "amqplib";
import { expect } from "chai";
import { type Consumer, type IHeaders, Kafka, logLevel } from "kafkajs";
import type { JetStreamManager } from "nats";
import { DeliveryEnv } from "../support/delivery-env.js";
import { destinationCalls, expectDeliveryMessage, signedBy, uniq } from "../support/destination-calls.js";
import { freePort } from "../support/ports.js";
import { TcpBalancer } from "../support/tcp-balancer.js";
import { until } from "../support/until.js";

// Destinations beyond HTTP, end to end through the API, the consumer's start path (POST
// /events), Temporal and the worker, against the real Kafka, NATS JetStream and RabbitMQ
// that setup starts: each event arrives once per delivery with the signed headers an HTTP
// delivery gets, verifiable with the config's secret; a broker that is down is retried
// until it is up; an ordered config keeps each key on one Kafka partition, in order; bad
// input is refused naming the field; credentials are sealed and never answered.

const KAFKA = "127.0.0.1:9092";
const AMQP = "amqp://guest@127.0.0.1:5672";

interface Got {
  headers: Record<string, string>;
  body: string;
  key?: string | null;
  partition?: number;
  offset?: string;
}

const verified = (secret: string, g: Got) => signedBy(secret, g.headers, g.body);

const kafkaHeaders = (h: IHeaders | undefined) =>
  Object.fromEntries(Object.entries(h ?? {}).map(([k, v]) => [k, String(v)]));

describe("destinations: Kafka, NATS and AMQP (real brokers, API, Temporal, worker)", function () {
  this.timeout(240_000);
  const env = new DeliveryEnv();
  const kafka = new Kafka({ clientId: "destinations-test", brokers: [KAFKA], logLevel: logLevel.NOTHING });
  const consumers: Consumer[] = [];
  let jsm: JetStreamManager;
  let amqp: ChannelModel;
  const streams: string[] = [];
  const queues: string[] = [];
  const balancers: TcpBalancer[] = [];

  before(async () => {
    await env.start(["--max-attempts", "30"]);
    jsm = await env.nats.jetstreamManager();
    amqp = await amqpConnect(`amqp://guest:guest@127.0.0.1:5672`);
  });
  after(async () => {
    for (const c of consumers) await c.disconnect().catch(() => undefined);
    for (const b of balancers) await b.stop().catch(() => undefined);
    for (const s of streams) await jsm?.streams.delete(s).catch(() => undefined);
    if (amqp) {
      const ch = await amqp.createChannel();
      for (const q of queues) await ch.deleteQueue(q).catch(() => undefined);
      await amqp.close();
    }
    await env.stop();
  });

  const { post, succeeded, failedAttempts, refused: bad } = destinationCalls(env);

  /** A new topic and everything published to it from now on. */
  const kafkaTopic = async (partitions = 1) => {
    const topic = uniq("dest");
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic, numPartitions: partitions }], waitForLeaders: true });
    await admin.disconnect();
    const got: Got[] = [];
    const consumer = kafka.consumer({ groupId: uniq("dest-test") });
    consumers.push(consumer);
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ message, partition }) => {
        got.push({
          headers: kafkaHeaders(message.headers),
          body: message.value?.toString() ?? "",
          key: message.key?.toString() ?? null,
          partition,
          offset: message.offset,
        });
      },
    });
    return { topic, got };
  };

  it("kafka: each event once, signed headers as record headers, verifiable with the config's secret", async () => {
    const { topic, got } = await kafkaTopic();
    const type = uniq("kafka_plain");
    const config = await env.createConfig({
      eventTypes: [`ledger.${type}`],
      destination: { type: "kafka", brokers: [KAFKA], topic },
    });
    const ids = [await post(type), await post(type, { payload: { n: 2 } })];
    await until("both Kafka records", () => got.length >= 2, 60_000);
    for (const id of ids) await until(`the success row of ${id}`, () => succeeded(config.id, id));
    await new Promise((r) => setTimeout(r, 500));
    expect(got.map((g) => g.headers["svc-webhook-id"]).sort()).to.deep.equal([...ids].sort());
    for (const g of got) {
      expectDeliveryMessage(config.secret, g.headers, g.body, `ledger.${type}`);
      expect(g.key).to.equal(null);
    }
    const rows = (await env.attempts(config.id)).filter((a) => a.status === "success");
    expect(rows.map((a) => a.status_code)).to.deep.equal([200, 200]);
    const shown = await env.api.call("GET", `/configs/${config.id}`);
    expect(shown.body.data.endpoint).to.equal(`kafka://${KAFKA}/${topic}`);
    expect(shown.body.data.destination).to.deep.equal({ type: "kafka", brokers: [KAFKA], topic });
  });

  it("kafka, ordered: each ordering key is the record key, on one partition, in order", async () => {
    const { topic, got } = await kafkaTopic(3);
    const type = uniq("kafka_ordered");
    const config = await env.createConfig({
      eventTypes: [`ledger.${type}`],
      destination: { type: "kafka", brokers: [KAFKA], topic },
      ordering: { enabled: true },
    });
    const keys = ["k-a", "k-b", "k-c"];
    for (let seq = 1; seq <= 4; seq++)
      for (const key of keys)
        await post(type, {
          idempotency_key: `${type}-${key}-${seq}`,
          ordering_key: key,
          payload: { key, seq },
        });
    await until("12 Kafka records", () => got.length >= 12, 120_000);
    await new Promise((r) => setTimeout(r, 1000));
    expect(got).to.have.length(12);
    for (const key of keys) {
      const mine = got.filter((g) => g.key === key);
      expect(new Set(mine.map((g) => g.partition)).size, key).to.equal(1);
      const byOffset = [...mine].sort((a, b) => Number(a.offset) - Number(b.offset));
      expect(
        byOffset.map((g) => JSON.parse(g.body).payload.seq),
        key,
      ).to.deep.equal([1, 2, 3, 4]);
      for (const g of mine) expect(verified(config.secret, g)).to.equal(true);
    }
  });

  it("kafka: a broker that is down is retried, then delivered once it is up", async () => {
    const { topic, got } = await kafkaTopic();
    const port = await freePort();
    const type = uniq("kafka_down");
    const config = await env.createConfig({
      eventTypes: [`ledger.${type}`],
      destination: { type: "kafka", brokers: [`127.0.0.1:${port}`], topic },
    });
    const id = await post(type);
    expect(await failedAttempts(config.id, 2)).to.match(/kafka|connect|ECONNREFUSED/i);
    balancers.push(await new TcpBalancer([KAFKA]).start(port));
    await until("the delivery's success", () => succeeded(config.id, id), 90_000);
    await until("the Kafka record", () => got.length >= 1, 30_000);
    await new Promise((r) => setTimeout(r, 500));
    expect(got.map((g) => g.headers["svc-webhook-id"])).to.deep.equal([id]);
    expect(verified(config.secret, got[0]!)).to.equal(true);
  });

  it("nats: a JetStream stream gets each event once, with the signed headers and the webhook id as Nats-Msg-Id", async () => {
    const stream = uniq("DEST").toUpperCase().replace("-", "_");
    const subject = `dest.${randomBytes(4).toString("hex")}`;
    await jsm.streams.add({ name: stream, subjects: [subject] });
    streams.push(stream);
    const type = uniq("nats_js");
    const config = await env.createConfig({
      eventTypes: [`ledger.${type}`],
      destination: { type: "nats", servers: ["nats://127.0.0.1:4222"], subject },
    });
    const id = await post(type);
    await until("the success row", () => succeeded(config.id, id), 60_000);
    const info = await jsm.streams.info(stream);
    expect(info.state.messages).to.equal(1);
    const m = await jsm.streams.getMessage(stream, { seq: 1 });
    const headers: Record<string, string> = {};
    for (const [k, v] of m.header) headers[k.toLowerCase()] = v[0]!;
    const g = { headers, body: new TextDecoder().decode(m.data) };
    expect(headers["svc-webhook-id"]).to.equal(id);
    expect(headers["nats-msg-id"]).to.equal(id);
    expect(verified(config.secret, g)).to.equal(true);
    // A test delivery goes the same way, flagged as a test.
    const test = await env.api.call("POST", `/configs/${config.id}/test`);
    expect(test.status, test.text).to.equal(200);
    expect(test.body.data.status, test.text).to.equal("success");
    const t = await jsm.streams.getMessage(stream, { seq: 2 });
    expect(t.header.get("svc-webhook-test")).to.equal("true");
  });

  it("nats: a subject no stream captures is an attempt that says so, retried", async () => {
    const subject = `dest.nostream.${randomBytes(4).toString("hex")}`;
    const type = uniq("nats_nostream");
    const config = await env.createConfig({
      eventTypes: [`ledger.${type}`],
      destination: { type: "nats", servers: ["nats://127.0.0.1:4222"], subject },
    });
    await post(type);
    await until("a failed attempt", async () => (await env.attempts(config.id)).some((a) => a.error), 60_000);
    const row = (await env.attempts(config.id)).find((a) => a.error)!;
    expect(row.status).to.equal("to retry");
    expect(row.error).to.include("no JetStream stream captures subject");
    await env.api.call("PUT", `/configs/${config.id}/deactivate`);
  });

  it("amqp: a queue gets each event once with the signed headers as properties; the password is sealed and never answered", async () => {
    const queue = uniq("dest");
    queues.push(queue);
    const ch = await amqp.createChannel();
    await ch.assertQueue(queue, { durable: false });
    const got: Got[] = [];
    await ch.consume(queue, (m: ConsumeMessage | null) => {
      if (!m) return;
      const headers = Object.fromEntries(
        Object.entries(m.properties.headers ?? {}).map(([k, v]) => [k, String(v)]),
      );
      got.push({
        headers: { ...headers, "message-id": String(m.properties.messageId) },
        body: m.content.toString(),
      });
      ch.ack(m);
    });
    const type = uniq("amqp");
    const config = await env.createConfig({
      eventTypes: [`ledger.${type}`],
      destination: { type: "amqp", url: AMQP, password: "guest", routingKey: queue },
    });
    const id = await post(type, { ordering_key: "acct-7" });
    await until("the AMQP message", () => got.length >= 1, 60_000);
    await until("the success row", () => succeeded(config.id, id));
    await new Promise((r) => setTimeout(r, 300));
    expect(got).to.have.length(1);
    expect(got[0]!.headers["svc-webhook-id"]).to.equal(id);
    expect(got[0]!.headers["message-id"]).to.equal(id);
    expect(verified(config.secret, got[0]!)).to.equal(true);

    const [row] = await env.query<{ destination_secret: string }>(
      "SELECT destination_secret FROM config_auth WHERE config_id = $1",
      [config.id],
    );
    expect(row?.destination_secret).to.match(/^sealed1\./);
    expect(row?.destination_secret).to.not.include("guest");
    const [stored] = await env.query<{ destination: unknown }>(
      "SELECT destination FROM configs WHERE id = $1",
      [config.id],
    );
    expect(JSON.stringify(stored?.destination)).to.not.include("password");
    for (const path of [`/configs/${config.id}`, "/configs", `/configs/${config.id}/auth`]) {
      const r = await env.api.call("GET", path);
      expect(r.status, path).to.equal(200);
      expect(r.text, path).to.not.match(/"password"/);
    }
    const shown = await env.api.call("GET", `/configs/${config.id}`);
    expect(shown.body.data.destination).to.deep.equal({
      type: "amqp",
      url: AMQP,
      exchange: "",
      routingKey: queue,
    });
    // Sent back as it was answered (no password), the stored password is kept.
    const back = await env.api.call("PUT", `/configs/${config.id}`, {
      endpoint: shown.body.data.endpoint,
      eventTypes: shown.body.data.eventTypes,
      destination: shown.body.data.destination,
    });
    expect(back.status, back.text).to.equal(200);
    const again = await post(type);
    await until("the second message", () => got.length >= 2, 60_000);
    await until("its success row", () => succeeded(config.id, again));
  });

  it("amqp: a broker that is down is retried, then delivered once it is up", async () => {
    const queue = uniq("dest-down");
    queues.push(queue);
    const ch = await amqp.createChannel();
    await ch.assertQueue(queue, { durable: false });
    const port = await freePort();
    const type = uniq("amqp_down");
    const config = await env.createConfig({
      eventTypes: [`ledger.${type}`],
      destination: { type: "amqp", url: `amqp://127.0.0.1:${port}`, routingKey: queue },
    });
    const id = await post(type);
    await failedAttempts(config.id, 1);
    balancers.push(await new TcpBalancer(["127.0.0.1:5672"]).start(port));
    await until("the delivery's success", () => succeeded(config.id, id), 90_000);
    const m = await ch.get(queue, { noAck: true });
    expect(m ? m.properties.headers?.["svc-webhook-id"] : undefined).to.equal(id);
  });

  it("refuses bad destinations naming the field", async () => {
    expect(await bad({ type: "kafka", brokers: [KAFKA] })).to.equal(
      'missing required field "destination.topic"',
    );
    expect(await bad({ type: "kafka", brokers: ["no-port"], topic: "t" })).to.match(
      /^destination\.brokers\[0\] must be host:port/,
    );
    expect(await bad({ type: "kafka", brokers: [KAFKA], topic: "a b" })).to.match(
      /^destination\.topic must be/,
    );
    expect(await bad({ type: "kafka", brokers: [KAFKA], topic: "t", subject: "x" })).to.equal(
      "destination.subject does not apply to a kafka destination",
    );
    expect(await bad({ type: "kafka", brokers: ["169.254.169.254:9092"], topic: "t" })).to.match(
      /^destination\.brokers\[0\] is refused by the egress policy/,
    );
    expect(
      await bad({ type: "kafka", brokers: [KAFKA], topic: "t", sasl: { mechanism: "plain", username: "u" } }),
    ).to.equal('missing required field "destination.sasl.password"');
    expect(
      await bad({
        type: "kafka",
        brokers: ["kafka.example.com:9092"],
        topic: "t",
        sasl: { mechanism: "plain", username: "u", password: "p" },
      }),
    ).to.match(/^destination\.sasl\.password: the credential would cross a plaintext connection/);
    expect(await bad({ type: "nats", servers: ["nats://127.0.0.1:4222"], subject: "a.*" })).to.match(
      /^destination\.subject must be a NATS subject without wildcards/,
    );
    expect(await bad({ type: "nats", servers: ["nats://tok@127.0.0.1:4222"], subject: "a" })).to.match(
      /^destination\.servers\[0\] must not carry credentials/,
    );
    expect(await bad({ type: "amqp", url: AMQP, routingKey: "q" })).to.equal(
      'missing required field "destination.password"',
    );
    expect(await bad({ type: "amqp", url: "amqp://guest:guest@127.0.0.1", routingKey: "q" })).to.match(
      /^destination\.url must not carry a password/,
    );
    expect(await bad({ type: "amqp", url: "http://127.0.0.1", routingKey: "q" })).to.match(
      /^destination\.url must use amqp or amqps/,
    );
    expect(await bad({ type: "amqp", url: "amqp://127.0.0.1" })).to.match(
      /^missing required field "destination\.routingKey"/,
    );
    expect(
      await bad({ type: "kafka", brokers: [KAFKA], topic: "t" }, { endpoint: "https://example.com/" }),
    ).to.match(/^endpoint: a kafka destination's endpoint is derived from it/);
    expect(
      await bad({ type: "kafka", brokers: [KAFKA], topic: "t" }, { auth: { bearer: { token: "abc" } } }),
    ).to.match(/^auth: endpoint auth applies to http destinations only/);
    expect(await bad({ type: "http" })).to.equal('missing required field "endpoint"');
    const typo = await env.api.call("POST", "/configs", {
      eventTypes: ["ledger.anything"],
      destination: { type: "pubsub" },
    });
    expect(typo.status).to.equal(400);
    expect(typo.body.errorMessage).to.include("destination.type");
  });

  it("asks for a credential again when the addresses it was given for change", async () => {
    const config = await env.createConfig({
      eventTypes: ["ledger.moved"],
      destination: { type: "amqp", url: AMQP, password: "guest", routingKey: "q" },
    });
    const moved = await env.api.call("PUT", `/configs/${config.id}`, {
      eventTypes: ["ledger.moved"],
      destination: { type: "amqp", url: "amqp://guest@localhost:5672", routingKey: "q" },
    });
    expect(moved.status, moved.text).to.equal(400);
    expect(moved.body.errorMessage).to.match(
      /^missing required field "destination\.password" \(a credential stays/,
    );
    // Back to HTTP: the broker's credential goes with it.
    const http = await env.api.call("PUT", `/configs/${config.id}`, {
      eventTypes: ["ledger.moved"],
      destination: { type: "http" },
      endpoint: "http://127.0.0.1:9/hook",
    });
    expect(http.status, http.text).to.equal(200);
    expect(http.body.data.destination).to.equal(undefined);
    const rows = await env.query("SELECT 1 FROM config_auth WHERE config_id = $1", [config.id]);
    expect(rows).to.have.length(0);
  });
});
