import { expect } from "chai";
import pg from "pg";
import { sendWebhook } from "../../activities/http-send.js";
import { idempotencyKeyFromHeader, idempotencyKeyHeader } from "../../activities/idempotency-key-header.js";
import { DeliveryEnv } from "../support/delivery-env.js";
import { Receiver, signedWith } from "../support/receiver.js";
import { until } from "../support/until.js";

const SECRET = Buffer.alloc(24, 9).toString("base64");

/**
 * Idempotency keys that cannot go into an HTTP header as they are (CJK, a newline, a
 * leading space) reach the receiver once, encoded as `UTF-8''<percent-encoded UTF-8>`, on
 * the broker path and over POST /events; a NUL is refused where the event enters (400, or a
 * dead letter with the reason). Before
 * the encoding, Node refused to build such a request and the delivery retried for hours.
 */
describe("idempotency keys that are not header-safe", function () {
  this.timeout(120_000);
  const env = new DeliveryEnv();
  let receiver: Receiver;
  let configId: string;

  before(async () => {
    await env.start();
    receiver = await new Receiver().start();
    configId = (await env.createConfig({ endpoint: receiver.url, secret: SECRET })).id;
  });
  after(async () => {
    await receiver?.stop();
    await env.stop();
  });

  const keys = {
    cjk: `注文-${Date.now()}`,
    newline: `line\nbreak-${Date.now()}`,
    space: ` padded-${Date.now()}`,
    prefixed: `UTF-8''looks-encoded-${Date.now()}`,
    plain: `plain-key_${Date.now()}:ok`,
  };

  it("encodes only the keys that need it, and the receiver's decode gives the key back", () => {
    expect(idempotencyKeyHeader(keys.plain)).to.equal(keys.plain);
    expect(idempotencyKeyHeader("注文-1")).to.equal("UTF-8''%E6%B3%A8%E6%96%87-1");
    expect(idempotencyKeyHeader("a\nb")).to.equal("UTF-8''a%0Ab");
    expect(idempotencyKeyHeader("it's (é)*")).to.equal("UTF-8''it%27s%20%28%C3%A9%29%2A");
    expect(idempotencyKeyHeader("it's (1)*")).to.equal("it's (1)*");
    for (const key of [...Object.values(keys), "a\u0000b", "é", "a b"])
      expect(idempotencyKeyFromHeader(idempotencyKeyHeader(key))).to.equal(key);
  });

  for (const path of ["NATS", "POST /events"] as const) {
    it(`delivers each key once over ${path}, decodable from the header, with a valid signature`, async () => {
      const sent = Object.values(keys).map((k) => `${path}|${k}`);
      for (const key of sent) {
        const event = env.event({ idempotency_key: key });
        if (path === "NATS") await env.publish(event);
        else {
          const r = await env.api.call("POST", "/events", event);
          expect(r.status, r.text).to.equal(202);
        }
      }
      const mine = () => receiver.requests.filter((r) => JSON.parse(r.body).idempotency_key.startsWith(path));
      const deadline = Date.now() + 30_000;
      while (mine().length < sent.length && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 100));
      const got = mine();
      expect(got.map((r) => JSON.parse(r.body).idempotency_key).sort()).to.deep.equal([...sent].sort());
      for (const r of got) {
        expect(signedWith(SECRET, r)).to.equal(true);
        const header = String(r.headers["svc-webhook-idempotency-key"]);
        expect(idempotencyKeyFromHeader(header)).to.equal(JSON.parse(r.body).idempotency_key);
      }
      // Each delivered on its first attempt: no retry loop. A row is written once its POST
      // was answered, so it can follow the receipt by a moment on a loaded machine.
      const succeeded = async () =>
        (await env.attempts(configId)).filter((a) => a.status === "success").length;
      await until("a success row per delivery", async () => (await succeeded()) >= sent.length, 30_000);
      expect((await env.attempts(configId)).filter((a) => a.status !== "success")).to.deep.equal([]);
    });
  }

  it("refuses a key with a NUL over POST /events, naming the field", async () => {
    const r = await env.api.call("POST", "/events", env.event({ idempotency_key: "nul\u0000key" }));
    expect(r.status).to.equal(400);
    expect(r.body.errorMessage).to.match(/idempotency_key: contains a NUL character/);
  });

  it("dead-letters a key with a NUL from the broker, byte-exact, naming the field", async () => {
    const bytes = Buffer.from(JSON.stringify(env.event({ idempotency_key: `nul\u0000key-${Date.now()}` })));
    const ack = await env.nats.jetstream().publish(env.topic, bytes);
    const client = new pg.Client({ connectionString: env.api.db.url });
    await client.connect();
    try {
      let row: { message: Buffer; reason: string } | undefined;
      for (let i = 0; i < 300 && !row; i++) {
        row = (
          await client.query("SELECT message, reason FROM dead_letters WHERE position = $1", [
            `nats:${ack.stream}:${ack.seq}`,
          ])
        ).rows[0];
        if (!row) await new Promise((r) => setTimeout(r, 100));
      }
      expect(row, "no dead letter").to.exist;
      expect(row!.reason).to.match(/idempotency_key: contains a NUL character/);
      expect(row!.message.equals(bytes)).to.equal(true);
    } finally {
      await client.end();
    }
  });

  it("fails a send Node cannot build at once, marked permanent (never retried)", async () => {
    const result = await sendWebhook({
      endpoint: receiver.url,
      webhookId: "bad\nid",
      body: "{}",
      secrets: [SECRET],
      idempotencyKey: "k",
      test: true,
    });
    expect(result).to.include({ statusCode: 0, permanent: true });
    expect(result.error).to.match(/ERR_INVALID_CHAR/);
  });
});
