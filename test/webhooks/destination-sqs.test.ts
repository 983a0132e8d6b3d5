// tags: @needs-services (ElasticMQ on :9324, the SQS-compatible server setup starts)
import type { SQSClient } from "@aws-sdk/client-sqs";
import { expect } from "chai";
import { DeliveryEnv } from "../support/delivery-env.js";
import { destinationCalls, expectDeliveryMessage, signedBy, uniq } from "../support/destination-calls.js";
import {
  createQueue,
  deleteQueue,
  drain,
  ensureElasticMq,
  PrivateElasticMq,
  type Received,
  SQS_ENDPOINT,
  SQS_KEY,
  sqsClient,
} from "../support/elasticmq.js";
import { freePort } from "../support/ports.js";
import { until } from "../support/until.js";

// The SQS destination end to end through the API, the consumer's start path (POST /events),
// Temporal and the worker, against a real SQS-compatible server (ElasticMQ, which setup
// fetches from Maven Central and starts): each event arrives once per delivery with the
// signed headers an HTTP delivery gets as message attributes, verifiable with the config's
// secret; an ordered config on a FIFO queue keeps each key's order (the key is the
// MessageGroupId); a server that is frozen or down is retried until it answers; bad input is
// refused naming the field; the access key is sealed and never answered.

const verified = (secret: string, m: Received) => signedBy(secret, m.attributes, m.body);

describe("destinations: SQS (real ElasticMQ, API, Temporal, worker)", function () {
  this.timeout(240_000);
  const env = new DeliveryEnv();
  let sqs: SQSClient;
  const queues: string[] = [];
  const servers: PrivateElasticMq[] = [];

  before(async () => {
    await ensureElasticMq();
    // A frozen server's sends end at the send timeout: short, so that retries come quickly.
    await env.start(["--max-attempts", "30", "--send-timeout", "3s"]);
    sqs = sqsClient(SQS_ENDPOINT);
  });
  after(async () => {
    for (const q of queues) await deleteQueue(sqs, q).catch(() => undefined);
    for (const s of servers) await s.stop().catch(() => undefined);
    sqs?.destroy();
    await env.stop();
  });

  const { post, succeeded, failedAttempts, refused: bad } = destinationCalls(env);

  const queue = async (name: string, client = sqs) => {
    const url = await createQueue(client, name);
    if (client === sqs) queues.push(url);
    return url;
  };

  it("a standard queue gets each event once, the signed headers as message attributes; the key is sealed and never answered", async () => {
    const queueUrl = await queue(uniq("dest"));
    const type = uniq("sqs_plain");
    const config = await env.createConfig({
      eventTypes: [`ledger.${type}`],
      destination: { type: "sqs", queueUrl, ...SQS_KEY },
    });
    const ids = [await post(type), await post(type, { ordering_key: "acct-7", payload: { n: 2 } })];
    for (const id of ids) await until(`the success row of ${id}`, () => succeeded(config.id, id), 60_000);
    const got = await drain(sqs, queueUrl, 3, 4000);
    expect(got.map((m) => m.attributes["svc-webhook-id"]).sort()).to.deep.equal([...ids].sort());
    for (const m of got) {
      expectDeliveryMessage(config.secret, m.attributes, m.body, `ledger.${type}`);
      expect(m.groupId).to.equal(undefined);
    }
    const keyed = got.find((m) => m.attributes["svc-webhook-id"] === ids[1]);
    expect(keyed?.attributes["svc-webhook-ordering-key"]).to.equal("acct-7");
    const rows = (await env.attempts(config.id)).filter((a) => a.status === "success");
    expect(rows.map((a) => a.status_code)).to.deep.equal([200, 200]);

    const [row] = await env.query<{ destination_secret: string }>(
      "SELECT destination_secret FROM config_auth WHERE config_id = $1",
      [config.id],
    );
    expect(row?.destination_secret).to.match(/^sealed1\./);
    expect(row?.destination_secret).to.not.include(SQS_KEY.secretAccessKey);
    expect(row?.destination_secret).to.not.include(SQS_KEY.accessKeyId);
    for (const path of [`/configs/${config.id}`, "/configs", `/configs/${config.id}/auth`]) {
      const r = await env.api.call("GET", path);
      expect(r.status, path).to.equal(200);
      expect(r.text, path).to.not.match(/accessKeyId|secretAccessKey|test-secret-key|test-key-id/);
    }
    const shown = await env.api.call("GET", `/configs/${config.id}`);
    expect(shown.body.data.destination).to.deep.equal({ type: "sqs", queueUrl, region: "us-east-1" });
    expect(shown.body.data.endpoint).to.equal(`sqs+${queueUrl}`);
    // Sent back as it was answered (no key), the stored key is kept; a test delivery goes the same way.
    const back = await env.api.call("PUT", `/configs/${config.id}`, {
      endpoint: shown.body.data.endpoint,
      eventTypes: shown.body.data.eventTypes,
      destination: shown.body.data.destination,
    });
    expect(back.status, back.text).to.equal(200);
    const test = await env.api.call("POST", `/configs/${config.id}/test`);
    expect(test.status, test.text).to.equal(200);
    expect(test.body.data.status, test.text).to.equal("success");
    const [t] = await drain(sqs, queueUrl, 1);
    expect(t?.attributes["svc-webhook-test"]).to.equal("true");
    // (A PUT without "secret" gave the config a new one.)
    const secret = (await env.api.call("GET", `/configs/${config.id}/secret`)).body.data.secret;
    expect(verified(secret, t!), JSON.stringify(t)).to.equal(true);
  });

  it("an ordered config on a FIFO queue: each ordering key is the MessageGroupId and keeps its order, the webhook id is the deduplication id", async () => {
    const queueUrl = await queue(`${uniq("dest-ordered")}.fifo`);
    const type = uniq("sqs_ordered");
    const config = await env.createConfig({
      eventTypes: [`ledger.${type}`],
      destination: { type: "sqs", queueUrl, ...SQS_KEY },
      ordering: { enabled: true },
    });
    const keys = ["k-a", "k-b", "k-c"];
    const ids = new Map<string, string>();
    for (let seq = 1; seq <= 4; seq++)
      for (const key of keys) {
        const id = await post(type, {
          idempotency_key: `${type}-${key}-${seq}`,
          ordering_key: key,
          payload: { key, seq },
        });
        ids.set(id, key);
      }
    const got = await drain(sqs, queueUrl, 12, 120_000);
    await new Promise((r) => setTimeout(r, 500));
    got.push(...(await drain(sqs, queueUrl, 1, 1500)));
    expect(got).to.have.length(12);
    for (const key of keys) {
      const mine = got.filter((m) => m.groupId === key);
      expect(
        mine.map((m) => JSON.parse(m.body).payload.seq),
        key,
      ).to.deep.equal([1, 2, 3, 4]);
      const sequences = mine.map((m) => BigInt(m.sequence!));
      expect([...sequences].sort((a, b) => (a < b ? -1 : 1))).to.deep.equal(sequences);
      for (const m of mine) {
        expect(verified(config.secret, m)).to.equal(true);
        expect(ids.get(m.attributes["svc-webhook-id"]!)).to.equal(key);
        expect(m.attributes["svc-webhook-ordering-key"]).to.equal(key);
        expect(m.deduplicationId).to.equal(m.attributes["svc-webhook-id"]);
      }
    }
  });

  it("a frozen server (SIGSTOP) is retried, then delivered once when it answers again (one deduplication id for every try)", async () => {
    const server = await new PrivateElasticMq().start();
    servers.push(server);
    const own = sqsClient(server.endpoint);
    const queueUrl = await queue(`${uniq("dest-frozen")}.fifo`, own);
    const type = uniq("sqs_frozen");
    const config = await env.createConfig({
      eventTypes: [`ledger.${type}`],
      destination: { type: "sqs", queueUrl, ...SQS_KEY },
    });
    server.freeze();
    try {
      const id = await post(type);
      expect(await failedAttempts(config.id, 2)).to.match(/timeout|timed out/i);
      server.resume();
      await until("the delivery's success", () => succeeded(config.id, id), 90_000);
      const got = await drain(own, queueUrl, 2, 4000);
      expect(got.map((m) => m.attributes["svc-webhook-id"])).to.deep.equal([id]);
      expect(verified(config.secret, got[0]!)).to.equal(true);
    } finally {
      server.resume();
      own.destroy();
    }
  });

  it("a server that is down, then up without the queue, is retried until the queue exists", async () => {
    const server = new PrivateElasticMq();
    servers.push(server);
    // Nothing listens there yet.
    server.port = await freePort();
    const name = uniq("dest-down");
    const queueUrl = `http://127.0.0.1:${server.port}/000000000000/${name}`;
    const type = uniq("sqs_down");
    const config = await env.createConfig({
      eventTypes: [`ledger.${type}`],
      destination: { type: "sqs", queueUrl, ...SQS_KEY },
    });
    const id = await post(type);
    await until(
      "a refused attempt",
      async () => (await env.attempts(config.id)).some((a) => /ECONNREFUSED/.test(a.error ?? "")),
      60_000,
    );
    await server.start();
    await until(
      "an attempt that says the queue does not exist",
      async () => (await env.attempts(config.id)).some((a) => /does not exist/.test(a.error ?? "")),
      60_000,
    );
    const own = sqsClient(server.endpoint);
    try {
      expect(await createQueue(own, name)).to.equal(queueUrl);
      await until("the delivery's success", () => succeeded(config.id, id), 90_000);
      const got = await drain(own, queueUrl, 1);
      expect(got.map((m) => m.attributes["svc-webhook-id"])).to.deep.equal([id]);
      expect(verified(config.secret, got[0]!)).to.equal(true);
    } finally {
      own.destroy();
    }
  });

  it("a message over the queue's size limit (1 MiB) fails at once, naming it: no retry can send it", async () => {
    const queueUrl = await queue(uniq("dest-big"));
    const type = uniq("sqs_big");
    const config = await env.createConfig({
      eventTypes: [`ledger.${type}`],
      destination: { type: "sqs", queueUrl, ...SQS_KEY },
    });
    const id = await post(type, { payload: { blob: "x".repeat(1024 * 1024 + 100) } });
    await until(
      "the failed row",
      async () => (await env.attempts(config.id)).some((a) => a.webhook_id === id && a.status === "failed"),
      60_000,
    );
    const rows = await env.attempts(config.id);
    expect(rows, JSON.stringify(rows)).to.have.length(1);
    expect(rows[0]!.error).to.match(/^sqs InvalidAttributeValue HTTP 400: MessageTooLong/);
    expect(await drain(sqs, queueUrl, 1, 1500)).to.deep.equal([]);
  });

  it("refuses bad SQS destinations naming the field, and asks for the key again when the host changes", async () => {
    const queueUrl = `${SQS_ENDPOINT}/000000000000/orders`;
    expect(await bad({ type: "sqs", ...SQS_KEY })).to.equal('missing required field "destination.queueUrl"');
    expect(await bad({ type: "sqs", queueUrl: 42, ...SQS_KEY })).to.equal(
      "destination.queueUrl must be of type string",
    );
    expect(await bad({ type: "sqs", queueUrl, ...SQS_KEY, queue: "orders" })).to.equal(
      'unknown field "destination.queue"',
    );
    expect(await bad({ type: "sqs", queueUrl, ...SQS_KEY, topic: "t" })).to.equal(
      "destination.topic does not apply to a sqs destination",
    );
    expect(await bad({ type: "sqs", queueUrl: "not a url", ...SQS_KEY })).to.match(
      /^destination\.queueUrl must be a URL/,
    );
    expect(await bad({ type: "sqs", queueUrl: "ftp://127.0.0.1/0/orders", ...SQS_KEY })).to.match(
      /^destination\.queueUrl must use https or http/,
    );
    expect(await bad({ type: "sqs", queueUrl: `${SQS_ENDPOINT}/`, ...SQS_KEY })).to.match(
      /^destination\.queueUrl must end with \/<account>\/<queue name>/,
    );
    expect(await bad({ type: "sqs", queueUrl: `${SQS_ENDPOINT}/0/a%20b`, ...SQS_KEY })).to.match(
      /^destination\.queueUrl must end with/,
    );
    expect(
      await bad({ type: "sqs", queueUrl: "http://key:secret@127.0.0.1:9324/0/orders", ...SQS_KEY }),
    ).to.match(/^destination\.queueUrl must not carry a password/);
    expect(await bad({ type: "sqs", queueUrl: "http://169.254.169.254/0/orders", ...SQS_KEY })).to.match(
      /^destination\.queueUrl is refused by the egress policy/,
    );
    expect(await bad({ type: "sqs", queueUrl, ...SQS_KEY, region: "EU WEST" })).to.match(
      /^destination\.region must be a region name/,
    );
    expect(await bad({ type: "sqs", queueUrl, accessKeyId: "id" })).to.equal(
      'missing required field "destination.secretAccessKey"',
    );
    expect(await bad({ type: "sqs", queueUrl, secretAccessKey: "s" })).to.equal(
      'missing required field "destination.accessKeyId"',
    );
    expect(await bad({ type: "sqs", queueUrl, ...SQS_KEY }, { endpoint: queueUrl })).to.match(
      /^endpoint: a sqs destination's endpoint is derived from it/,
    );

    const config = await env.createConfig({
      eventTypes: ["ledger.moved"],
      destination: { type: "sqs", queueUrl, ...SQS_KEY },
    });
    const moved = await env.api.call("PUT", `/configs/${config.id}`, {
      eventTypes: ["ledger.moved"],
      destination: { type: "sqs", queueUrl: "http://localhost:9324/000000000000/orders" },
    });
    expect(moved.status, moved.text).to.equal(400);
    expect(moved.body.errorMessage).to.match(
      /^missing required field "destination\.accessKeyId" \(a credential stays/,
    );
    // Another queue on the same server keeps the key.
    const other = await env.api.call("PUT", `/configs/${config.id}`, {
      eventTypes: ["ledger.moved"],
      destination: { type: "sqs", queueUrl: `${SQS_ENDPOINT}/000000000000/other.fifo`, region: "eu-west-1" },
    });
    expect(other.status, other.text).to.equal(200);
    expect(other.body.data.destination).to.deep.equal({
      type: "sqs",
      queueUrl: `${SQS_ENDPOINT}/000000000000/other.fifo`,
      region: "eu-west-1",
    });
  });
});
