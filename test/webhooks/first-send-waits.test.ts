// tags: @long (over 45 s: among the first files the parallel suite starts)
import { expect } from "chai";
import { webhookIdFor } from "../../core/event-message.js";
import { DeliveryEnv } from "../support/delivery-env.js";
import { type RateLimitUnderTest, startRateLimitService } from "../support/ratelimit-service.js";
import { Receiver } from "../support/receiver.js";
import { WipeableTemporal } from "../support/wipeable-temporal.js";

const ONE_A_MINUTE = `domain: webhooks
descriptors:
  - key: config_id
    rate_limit: { unit: minute, requests_per_unit: 1 }
`;

/** Resolves once the clock is between `lo` and `hi` seconds into a minute (the rule's window). */
async function atSecondOfMinute(lo: number, hi: number): Promise<void> {
  for (;;) {
    const s = new Date().getSeconds();
    if (s >= lo && s <= hi) return;
    await new Promise((r) => setTimeout(r, 250));
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A first send the rate limit service refuses waits before any attempt row exists. It is
 * a delivery all the same: GET /webhooks/{id} shows it waiting with the reason, cancel
 * and config deactivation end it, a lost workflow is restarted or closed by reconciliation, and --abort-after
 * counts from its acceptance.
 */
describe("a first send that waits for the rate limit service", function () {
  this.timeout(300_000);
  let ratelimit: RateLimitUnderTest;
  let receiver: Receiver;

  before(async () => {
    ratelimit = await startRateLimitService(ONE_A_MINUTE);
    receiver = await new Receiver().start();
  });
  after(async () => {
    await receiver?.stop();
    await ratelimit?.stop();
  });

  const webhookOf = (env: DeliveryEnv, configId: string, key: string) =>
    webhookIdFor(env.workflowId(configId, key));

  describe("with --abort-after 20s", () => {
    const env = new DeliveryEnv();
    before(() => env.start(["--ratelimit-addr", ratelimit.grpcAddress, "--abort-after", "20s"]));
    after(() => env.stop());

    it("closes a delivery that never got permission, with the reason", async () => {
      const config = await env.createConfig({ endpoint: receiver.url, eventTypes: ["ledger.abort"] });
      // Early in a minute: the next permission is 30 s or more away, past the 20 s window.
      await atSecondOfMinute(2, 28);
      const events = [env.event({ type: "abort" }), env.event({ type: "abort" })];
      for (const e of events) await env.publish(e);
      const results = await Promise.all(events.map((e) => env.result(config.id, e.idempotency_key)));
      const failed = results.filter((r) => r.status === "failed");
      expect(results.map((r) => r.status).sort()).to.deep.equal(["failed", "success"]);
      expect(failed[0].reason).to.equal(
        "abort-after window exhausted while waiting for the rate limit service (never sent)",
      );
      const r = await env.api.call("GET", `/webhooks/${failed[0].webhookId}`);
      expect(r.status, r.text).to.equal(200);
      expect(r.body.data).to.include({ status: "failed", attemptCount: 0, reason: failed[0].reason });
    });
  });

  describe("visible, cancellable and repaired after Temporal lost its state", () => {
    const env = new DeliveryEnv();
    const temporal = new WipeableTemporal();

    before(async () => {
      await temporal.start();
      await env.start(
        ["--ratelimit-addr", ratelimit.grpcAddress, "--retry-period", "300ms", "--reconcile-grace", "1s"],
        temporal.address,
      );
    });
    after(async () => {
      await env.stop();
      await temporal?.stop();
    });

    it("ends a waiting first send when its config is deactivated, with the reason, and never sends it", async () => {
      const config = await env.createConfig({ endpoint: receiver.url, eventTypes: ["ledger.deactivated"] });
      await atSecondOfMinute(2, 40);
      const events = [env.event({ type: "deactivated" }), env.event({ type: "deactivated" })];
      for (const e of events) await env.publish(e);
      const ids = events.map((e) => webhookOf(env, config.id, e.idempotency_key));
      const get = async (id: string) => (await env.api.call("GET", `/webhooks/${id}`)).body.data;
      let statuses: string[] = [];
      for (let i = 0; i < 100; i++) {
        statuses = (await Promise.all(ids.map(get))).map((v) => v?.status);
        if (statuses.includes("success") && statuses.includes("waiting")) break;
        await sleep(100);
      }
      expect([...statuses].sort()).to.deep.equal(["success", "waiting"]);
      const i = statuses.indexOf("waiting");

      const d = await env.api.call("PUT", `/configs/${config.id}/deactivate`);
      expect(d.status, d.text).to.equal(200);
      const result = await env.result(config.id, events[i]!.idempotency_key);
      expect(result).to.include({ status: "failed", attempts: 0, reason: "config deactivated" });
      expect(await get(ids[i]!)).to.include({
        status: "failed",
        reason: "config deactivated",
        attemptCount: 0,
      });
      expect(receiver.requests.filter((r) => r.headers["svc-webhook-id"] === ids[i])).to.have.length(0);
    });

    it("answers GET for each at once, cancels one, and restarts or closes every other one", async () => {
      const config = await env.createConfig({ endpoint: receiver.url, eventTypes: ["ledger.waits"] });
      await atSecondOfMinute(2, 25);
      const events = Array.from({ length: 5 }, () => env.event({ type: "waits" }));
      for (const e of events) await env.publish(e);
      const ids = events.map((e) => webhookOf(env, config.id, e.idempotency_key));
      const get = async (id: string) => (await env.api.call("GET", `/webhooks/${id}`)).body.data;

      // Every delivery answers at once: one sent, four waiting with the reason.
      let views: { status: string; reason?: string; nextRetryAfter?: string }[] = [];
      for (let i = 0; i < 100; i++) {
        views = await Promise.all(ids.map(get));
        if (views.every((v) => v && (v.status === "success" || v.status === "waiting"))) break;
        await sleep(100);
      }
      expect(views.map((v) => v?.status).sort()).to.deep.equal([
        "success",
        "waiting",
        "waiting",
        "waiting",
        "waiting",
      ]);
      const waiting = ids.filter((_, i) => views[i]!.status === "waiting");
      for (const v of views.filter((v) => v.status === "waiting")) {
        expect(v.reason).to.equal("waiting for the rate limit service");
        expect(Date.parse(v.nextRetryAfter!)).to.be.greaterThan(Date.now());
      }

      // Cancelling one ends it, before any send.
      const [cancelled, ...rest] = waiting;
      const c = await env.api.call("POST", `/webhooks/${cancelled}/cancel`);
      expect(c.status, c.text).to.equal(202);
      for (let i = 0; i < 100 && (await get(cancelled!)).status === "waiting"; i++) await sleep(100);
      expect(await get(cancelled!)).to.include({ status: "failed", reason: "cancelled", attemptCount: 0 });

      // Temporal loses every workflow while the other three wait: once their wait is over,
      // reconciliation restarts each (same workflow id) or closes it; none is lost.
      await temporal.wipe();
      const ended = (v: { status: string }) => v.status !== "waiting";
      const running = async (id: string) => {
        const workflowId = env.workflowId(config.id, events[ids.indexOf(id)]!.idempotency_key);
        return env.temporal.workflow
          .getHandle(workflowId)
          .describe()
          .then(() => true)
          .catch(() => false);
      };
      const deadline = Date.now() + 120_000;
      let repaired: boolean[] = [];
      while (Date.now() < deadline) {
        repaired = await Promise.all(rest.map(async (id) => ended(await get(id)) || (await running(id))));
        if (repaired.every(Boolean)) break;
        await sleep(500);
      }
      expect(repaired, "deliveries neither restarted nor closed").to.deep.equal(rest.map(() => true));
      const metrics = await (await fetch(`${env.api.url}/metrics`)).text();
      expect(metrics).to.match(/webhooks_reconciliation_total\{outcome="(restarted|closed)"\} [1-9]/);
      // The cancelled one stays closed: nothing restarted it.
      expect(await get(cancelled!)).to.include({ status: "failed", reason: "cancelled" });
      expect(receiver.requests.filter((r) => r.headers["svc-webhook-id"] === cancelled)).to.have.length(0);
    });
  });
});
