// tags: @temporal-server (also run on the production Temporal server: npm run test:temporal-server)
import { expect } from "chai";
import { DeliveryEnv } from "../support/delivery-env.js";
import { sql } from "../support/poison.js";
import { freePort } from "../support/ports.js";
import { Receiver, signedWith } from "../support/receiver.js";

const SECRET = Buffer.alloc(24, 3).toString("base64");

describe("durable delivery (NATS JetStream → Temporal workflow → HTTP, mirrored in PostgreSQL)", function () {
  this.timeout(120_000);
  const env = new DeliveryEnv();
  let receiver: Receiver;

  before(async () => {
    await env.start(["--max-attempts", "4"]);
    receiver = await new Receiver().start();
  });
  after(async () => {
    await receiver?.stop();
    await env.stop();
  });
  beforeEach(() => {
    receiver.respond = (_req, res) => res.writeHead(200).end("ok");
  });

  /** A config on its own receiver path, so each test counts only its own requests. */
  const setup = async (eventTypes?: string[], type = `t_${Math.random().toString(36).slice(2)}`) => {
    const path = `/hook-${type}`;
    const config = await env.createConfig({
      endpoint: receiver.url.replace("/hook", path),
      eventTypes: eventTypes ?? [`ledger.${type}`],
      secret: SECRET,
    });
    const requests = () => receiver.requests.filter((r) => r.path === path);
    const event = (over: Record<string, unknown> = {}) => env.event({ type: type.toUpperCase(), ...over });
    return { config, path, requests, event };
  };

  it("delivers a signed POST of the normalised event and records a success row", async () => {
    const { config, requests, event: make } = await setup();
    const event = make({ extra: "dropped" });
    await env.publish(event);
    const result = await env.result(config.id, event.idempotency_key);
    expect(result).to.include({ status: "success", attempts: 1, lastStatusCode: 200 });
    const [req] = requests();
    expect(req).to.exist;
    const body = JSON.parse(req!.body);
    expect(body).to.deep.equal({
      idempotency_key: event.idempotency_key,
      date: event.date,
      app: "ledger",
      version: "v2",
      type: `ledger.${event.type.toLowerCase()}`,
      payload: { ledger: "main", amount: 42 },
    });
    expect(Object.keys(body)).to.deep.equal(["idempotency_key", "date", "app", "version", "type", "payload"]);
    expect(req!.headers["svc-webhook-id"]).to.equal(result.webhookId);
    expect(req!.headers["svc-webhook-idempotency-key"]).to.equal(event.idempotency_key);
    expect(req!.headers["svc-webhook-test"]).to.equal("false");
    expect(signedWith(SECRET, req!)).to.equal(true);
    const rows = await env.attempts(config.id);
    expect(rows.map((r) => [r.retry_attempt, r.status, r.status_code])).to.deep.equal([[0, "success", 200]]);
    expect(rows[0]!.webhook_id).to.equal(result.webhookId);
  });

  it("retries with backoff until success, superseding the claimed rows", async () => {
    const { config, requests, event: make } = await setup();
    let calls = 0;
    receiver.respond = (_req, res) => {
      calls++;
      res.writeHead(calls <= 2 ? 500 : 200).end();
    };
    const event = make();
    await env.publish(event);
    const result = await env.result(config.id, event.idempotency_key);
    expect(result).to.include({ status: "success", attempts: 3 });
    const times = requests().map((r) => r.at);
    expect(times).to.have.length(3);
    expect(times[1]! - times[0]!).to.be.at.least(180);
    expect(times[2]! - times[1]!).to.be.at.least(380);
    const rows = await env.attempts(config.id);
    expect(rows.map((r) => [r.retry_attempt, r.status, r.status_code])).to.deep.equal([
      [0, "failed", 500],
      [1, "success", 500],
      [2, "success", 200],
    ]);
  });

  it("fails at once on a permanent 4xx, without retrying", async () => {
    const { config, requests, event: make } = await setup();
    receiver.respond = (_req, res) => res.writeHead(410).end("gone");
    const event = make();
    await env.publish(event);
    const result = await env.result(config.id, event.idempotency_key);
    expect(result).to.include({ status: "failed", attempts: 1, lastStatusCode: 410 });
    expect(requests()).to.have.length(1);
    const rows = await env.attempts(config.id);
    expect(rows.map((r) => [r.status, r.status_code])).to.deep.equal([["failed", 410]]);
  });

  it("stops at --max-attempts and marks every row failed", async () => {
    const { config, requests, event: make } = await setup();
    receiver.respond = (_req, res) => res.writeHead(503).end();
    const event = make();
    await env.publish(event);
    const result = await env.result(config.id, event.idempotency_key);
    expect(result).to.include({ status: "failed", attempts: 4 });
    expect(result.reason).to.match(/max attempts \(4\)/);
    expect(requests()).to.have.length(4);
    const rows = await env.attempts(config.id);
    expect(rows.map((r) => r.status)).to.deep.equal(["failed", "failed", "failed", "failed"]);
  });

  it("treats a refused connection as status 0 and retries it", async () => {
    const type = `t_${Date.now()}`;
    const config = await env.createConfig({
      endpoint: `http://127.0.0.1:${await freePort()}/closed`,
      eventTypes: [`ledger.${type}`],
    });
    const event = env.event({ type });
    await env.publish(event);
    const result = await env.result(config.id, event.idempotency_key);
    expect(result).to.include({ status: "failed", attempts: 4, lastStatusCode: 0 });
    const rows = await env.attempts(config.id);
    expect(rows.every((r) => r.status_code === 0 && /ECONNREFUSED/.test(r.error ?? ""))).to.equal(true);
  });

  it("honours a server-requested Retry-After longer than the backoff", async () => {
    const { config, requests, event: make } = await setup();
    let calls = 0;
    receiver.respond = (_req, res) => {
      calls++;
      if (calls === 1) res.writeHead(429, { "retry-after": "2" }).end();
      else res.writeHead(200).end();
    };
    const event = make();
    await env.publish(event);
    const result = await env.result(config.id, event.idempotency_key);
    expect(result).to.include({ status: "success", attempts: 2 });
    const [first, second] = requests();
    expect(second!.at - first!.at).to.be.at.least(1900);
  });

  it("sends nothing more once the config is deactivated, and ends the delivery failed", async () => {
    const { config, requests, event: make } = await setup();
    receiver.respond = (_req, res) => res.writeHead(500).end();
    const event = make();
    await env.publish(event);
    await receiver.waitFor(receiver.requests.length + 1);
    await env.api.call("PUT", `/configs/${config.id}/deactivate`);
    const result = await env.result(config.id, event.idempotency_key);
    expect(result.status).to.equal("failed");
    expect(result.reason).to.match(/deactivated|closed/);
    expect(requests()).to.have.length(1);
    const rows = await env.attempts(config.id);
    expect(rows.map((r) => r.status)).to.deep.equal(["failed"]);
  });

  it("starts one delivery per matching active config, wildcards included, inactive ones excluded", async () => {
    const app = `app_${Date.now()}`;
    const exact = await setup([`${app}.committed_transactions`]);
    const wildcard = await setup([`${app}.*`]);
    const other = await setup([`${app}.created`]);
    const inactive = await setup([`${app}.*`]);
    await env.api.call("PUT", `/configs/${inactive.config.id}/deactivate`);
    const event = env.event({ app });
    await env.publish(event);
    await env.result(exact.config.id, event.idempotency_key);
    await env.result(wildcard.config.id, event.idempotency_key);
    expect(exact.requests()).to.have.length(1);
    expect(wildcard.requests()).to.have.length(1);
    expect(other.requests()).to.have.length(0);
    expect(inactive.requests()).to.have.length(0);
  });

  it("starts nothing new when the broker redelivers the same event", async () => {
    const { config, requests, event: make } = await setup();
    const event = make();
    await env.publish(event);
    await env.result(config.id, event.idempotency_key);
    await env.publish(event);
    const marker = make();
    await env.publish(marker);
    await env.result(config.id, marker.idempotency_key);
    const bodies = requests().map((r) => JSON.parse(r.body).idempotency_key);
    expect(bodies.filter((k) => k === event.idempotency_key)).to.have.length(1);
    await env.api.process.waitForOutput(/"started":0/);
  });

  // Unparsable messages used to be logged and dropped; they now go to the dead-letter store.
  it("dead-letters an unparsable message as it came, with its reason, and keeps consuming", async () => {
    const { config, event: make } = await setup();
    await env.publish("{not json");
    await env.publish(JSON.stringify({ app: "ledger" }));
    const event = make();
    await env.publish(event);
    expect((await env.result(config.id, event.idempotency_key)).status).to.equal("success");
    await env.api.process.waitForOutput(
      /"reason":"not JSON[^"]*".*"msg":"dead-lettered: not an event message"/,
    );
    await env.api.process.waitForOutput(/"reason":"missing string field \\"type\\"".*not an event message/);
    const rows = await sql<{ message: Buffer; kind: string; reason: string }>(
      env.api,
      "SELECT message, kind::text AS kind, reason FROM dead_letters WHERE reason LIKE 'not an event message%' ORDER BY message",
    );
    expect(
      rows.map((r) => [
        r.message.toString("utf8"),
        r.kind,
        r.reason.replace(/^(not an event message: not JSON).*/, "$1"),
      ]),
    ).to.deep.equal([
      ['{"app":"ledger"}', "permanent", 'not an event message: missing string field "type"'],
      ["{not json", "permanent", "not an event message: not JSON"],
    ]);
  });
});
