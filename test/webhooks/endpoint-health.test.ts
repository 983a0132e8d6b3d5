import { randomBytes } from "node:crypto";
import { expect } from "chai";
import { connect } from "nats";
import { DeliveryEnv } from "../support/delivery-env.js";
import { Receiver } from "../support/receiver.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const keyOf = (body: string) => (JSON.parse(body) as { idempotency_key: string }).idempotency_key;

async function until(what: string, fn: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

/** A receiver answering each idempotency key with the status (and delay) the test set. */
async function scriptedReceiver() {
  const answers = new Map<string, { status: number; delayMs?: number }>();
  const receiver = await new Receiver().start();
  receiver.respond = (req, res) => {
    const a = answers.get(keyOf(req.body)) ?? { status: 200 };
    setTimeout(() => res.writeHead(a.status).end("x"), a.delayMs ?? 0);
  };
  return { receiver, answers };
}

/** GET /configs/{id}/stats and --auto-deactivate-after, against the real stack. */
describe("endpoint health", function () {
  this.timeout(180_000);

  describe("GET /configs/{id}/stats (automatic deactivation off, the default)", () => {
    const env = new DeliveryEnv();
    let receiver: Receiver;
    let answers: Map<string, { status: number; delayMs?: number }>;
    before(async () => {
      await env.start();
      ({ receiver, answers } = await scriptedReceiver());
    });
    after(async () => {
      await receiver?.stop();
      await env.stop();
    });

    const send = async (status: number, delayMs = 0) => {
      const key = `h-${randomBytes(5).toString("hex")}`;
      answers.set(key, { status, delayMs });
      const r = await env.api.call(
        "POST",
        "/events",
        env.event({ app: "health", type: "x", idempotency_key: key }),
      );
      if (r.status !== 202) throw new Error(r.text);
      await until(`the send of ${key}`, async () => receiver.requests.some((q) => keyOf(q.body) === key));
    };
    const stats = async (id: string) => {
      const r = await env.api.call("GET", `/configs/${id}/stats`);
      expect(r.status, r.text).to.equal(200);
      return r.body.data;
    };

    it("reports success rate, send latency and the failing streak per window", async () => {
      const config = await env.createConfig({ endpoint: receiver.url, eventTypes: ["health.x"] });
      const empty = await stats(config.id);
      expect(empty.failingSince).to.equal(undefined);
      expect(empty.windows.map((w: { window: string }) => w.window)).to.deep.equal(["5m", "1h", "24h"]);
      expect(empty.windows[0]).to.deep.equal({
        window: "5m",
        attempts: 0,
        succeeded: 0,
        failed: 0,
        successRate: null,
        latencyMs: null,
      });

      for (let i = 0; i < 3; i++) await send(200, 120);
      const beforeFailures = Date.now();
      await send(400);
      await send(400);
      // The rows are written after the answer: wait for the last one.
      await until("5 rows", async () => (await env.attempts(config.id)).length === 5);
      const failing = await stats(config.id);
      for (const w of failing.windows) {
        expect(w, w.window).to.include({ attempts: 5, succeeded: 3, failed: 2, successRate: 0.6 });
        expect(w.latencyMs.p50, w.window).to.be.at.least(100);
        expect(w.latencyMs.p99, w.window).to.be.at.least(w.latencyMs.p50);
      }
      const since = Date.parse(failing.failingSince);
      expect(since).to.be.within(beforeFailures - 1000, Date.now());
      expect(failing.active).to.equal(true);

      // Off by default: a config failing for seconds stays active.
      await sleep(2500);
      expect((await stats(config.id)).active).to.equal(true);

      await send(200);
      await until("6 rows", async () => (await env.attempts(config.id)).length === 6);
      expect((await stats(config.id)).failingSince).to.equal(undefined);
      expect(
        (await env.api.call("GET", "/configs/00000000-0000-4000-8000-000000000000/stats")).status,
      ).to.equal(404);
    });
  });

  describe("--auto-deactivate-after", () => {
    const env = new DeliveryEnv();
    const auditTopic = `audit-${randomBytes(4).toString("hex")}`;
    let receiver: Receiver;
    let answers: Map<string, { status: number; delayMs?: number }>;
    before(async () => {
      await env.start(["--auto-deactivate-after", "2s", "--audit-topic", auditTopic]);
      ({ receiver, answers } = await scriptedReceiver());
    });
    after(async () => {
      await receiver?.stop();
      await env.stop();
    });

    const ingest = async (type: string, status: number) => {
      const key = `d-${randomBytes(5).toString("hex")}`;
      answers.set(key, { status });
      const r = await env.api.call(
        "POST",
        "/events",
        env.event({ app: "deact", type, idempotency_key: key }),
      );
      if (r.status !== 202) throw new Error(r.text);
      return r.body.data.deliveries[0].webhookID as string;
    };
    const config = async (id: string) => (await env.api.call("GET", `/configs/${id}`)).body.data;

    it("deactivates a config failing that long, closes its deliveries, publishes it, and activate resets it", async () => {
      const failing = await env.createConfig({ endpoint: receiver.url, eventTypes: ["deact.fail"] });
      const healthy = await env.createConfig({ endpoint: receiver.url, eventTypes: ["deact.ok"] });
      await ingest("ok", 200);
      await ingest("fail", 400);
      // A delivery waiting for its retry: closed by the deactivation.
      const waiting = await ingest("fail", 503);

      await until(
        "the automatic deactivation",
        async () => (await config(failing.id)).active === false,
        20_000,
      );
      const off = await config(failing.id);
      expect(off.deactivatedReason).to.match(
        /^every send failed since .*, longer than --auto-deactivate-after 2s$/,
      );
      expect(Date.parse(off.deactivatedAt)).to.be.greaterThan(0);
      expect((await config(healthy.id)).active).to.equal(true);
      const stats = (await env.api.call("GET", `/configs/${failing.id}/stats`)).body.data;
      expect(stats).to.include({ active: false, deactivatedReason: off.deactivatedReason });
      expect(stats.failingSince).to.be.a("string");
      await until("the waiting delivery to close", async () =>
        (await env.attempts(failing.id)).some(
          (r) => r.webhook_id === waiting && r.status === "failed" && r.error === "config deactivated",
        ),
      );
      const list = (await env.api.call("GET", "/configs")).body.cursor.data as { id: string }[];
      expect(list.find((c) => c.id === failing.id)).to.include({ deactivatedReason: off.deactivatedReason });

      // The audit topic has the event.
      const nc = await connect({ servers: "nats://127.0.0.1:4222" });
      try {
        const consumer = await nc.jetstream().consumers.get(env.stream, { filterSubjects: auditTopic });
        let event: { type: string; payload: Record<string, unknown> } | undefined;
        const deadline = Date.now() + 10_000;
        while (!event && Date.now() < deadline) {
          const m = await consumer.next({ expires: 1000 });
          const e = m?.json<{ type: string; payload: Record<string, unknown> }>();
          if (e?.type === "CONFIG_DEACTIVATED" && e.payload.configID === failing.id) event = e;
        }
        expect(event?.payload).to.include({
          endpoint: receiver.url,
          automatic: true,
          reason: off.deactivatedReason,
        });
      } finally {
        await nc.close();
      }
      const metrics = await (await fetch(`${env.api.url}/metrics`)).text();
      expect(metrics).to.match(/webhooks_configs_auto_deactivated_total [1-9]/);

      // Activation clears it and restarts the clock: the old failures no longer count.
      const on = await env.api.call("PUT", `/configs/${failing.id}/activate`);
      expect(on.body.data.active).to.equal(true);
      expect(on.body.data.deactivatedReason).to.equal(undefined);
      expect((await env.api.call("GET", `/configs/${failing.id}/stats`)).body.data.failingSince).to.equal(
        undefined,
      );
      await sleep(3000);
      expect((await config(failing.id)).active).to.equal(true);
      // A new failing streak deactivates it again once it lasts.
      await ingest("fail", 400);
      await until("the second deactivation", async () => (await config(failing.id)).active === false, 20_000);
    });
  });
});
