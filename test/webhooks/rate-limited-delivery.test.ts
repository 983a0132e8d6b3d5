import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import { type DevServer, startDevServer } from "../../common/temporal-dev-server.js";
import { searchAttributeCliArgs } from "../../workflows/search-attributes.js";
import { DeliveryEnv } from "../support/delivery-env.js";
import { freePort } from "../support/ports.js";
import { type RateLimitUnderTest, startRateLimitService } from "../support/ratelimit-service.js";
import { Receiver } from "../support/receiver.js";

const RULES = `domain: webhooks
descriptors:
  - key: config_id
    rate_limit: { unit: second, requests_per_unit: 1 }
  - key: tenant_id
    descriptors:
      - key: endpoint_host
        rate_limit: { unit: second, requests_per_unit: 100 }
`;

/** One send a second per tenant and receiving host, nothing per config. */
const HOST_RULES = `domain: webhooks
descriptors:
  - key: tenant_id
    descriptors:
      - key: endpoint_host
        rate_limit: { unit: second, requests_per_unit: 1 }
`;

/** The delivery worker asks the real rate limit service before each send and waits on OVER_LIMIT. */
describe("deliveries through the rate limit service", function () {
  this.timeout(120_000);
  let ratelimit: RateLimitUnderTest;
  let receiver: Receiver;

  before(async () => {
    ratelimit = await startRateLimitService(RULES);
    receiver = await new Receiver().start();
  });
  after(async () => {
    await receiver?.stop();
    await ratelimit?.stop();
  });

  const hits = async (key: string) =>
    (await ratelimit.stats())[`ratelimit.service.rate_limit.webhooks.${key}.total_hits`] ?? 0;

  describe("one send a second per config", () => {
    const env = new DeliveryEnv();
    before(() => env.start(["--ratelimit-addr", ratelimit.grpcAddress]));
    after(() => env.stop());

    it("lands N sends in N distinct seconds, and waiting counts no hit and no attempt", async () => {
      const config = await env.createConfig({ endpoint: receiver.url, eventTypes: ["ledger.limited"] });
      const [configHits, hostHits] = [await hits("config_id"), await hits("tenant_id.endpoint_host")];
      const events = [1, 2, 3, 4, 5].map(() => env.event({ type: "limited" }));
      for (const e of events) await env.publish(e);
      for (const e of events)
        expect((await env.result(config.id, e.idempotency_key)).status).to.equal("success");
      // Permission and POST happen together, never in the last 100 ms of a window: each send
      // arrives in the second it was allowed in.
      const seconds = receiver.requests.map((r) => Math.floor(r.at / 1000));
      expect(new Set(seconds).size, `receipts in seconds ${seconds}`).to.equal(events.length);
      // Only the five sends counted, on both descriptors: the waits were peeks.
      expect(await hits("config_id")).to.equal(configHits + events.length);
      expect(await hits("tenant_id.endpoint_host")).to.equal(hostHits + events.length);
      const rows = await env.attempts(config.id);
      expect(rows.map((r) => [r.retry_attempt, r.status])).to.deep.equal(events.map(() => [0, "success"]));
    });
  });

  describe("a receiving host's budget is per tenant", () => {
    const env = new DeliveryEnv();
    let hostLimited: RateLimitUnderTest;
    before(async () => {
      hostLimited = await startRateLimitService(HOST_RULES);
      await env.start(["--ratelimit-addr", hostLimited.grpcAddress]);
    });
    after(async () => {
      await env.stop();
      await hostLimited?.stop();
    });

    it("lets tenant B send to a host while tenant A's backlog to the same host waits out A's budget", async () => {
      const host = await new Receiver().start();
      try {
        const tenants = ["host-a", "host-b"];
        for (const uid of tenants) {
          const t = await env.api.call("POST", "/tenants", { uid });
          await env.api.call("POST", "/configs", {
            endpoint: host.url,
            eventTypes: ["ledger.shared_host"],
            tenantId: t.body.data.id,
          });
        }
        const publish = (uid: string, n: number) =>
          Promise.all(
            Array.from({ length: n }, (_, i) =>
              env.publish(env.event({ type: "shared_host", tenant: uid, idempotency_key: `${uid}.${i}` })),
            ),
          );
        await publish("host-a", 8);
        await host.waitFor(1);
        // A's backlog now waits one send a second; B's two go on B's own budget.
        await publish("host-b", 2);
        await host.waitFor(10);
        const seconds = (uid: string) =>
          host.requests
            .filter((r) => JSON.parse(r.body).idempotency_key.startsWith(`${uid}.`))
            .map((r) => Math.floor(r.at / 1000));
        const [a, b] = [seconds("host-a"), seconds("host-b")];
        // Each tenant's own budget holds: one send a second each.
        expect(new Set(a).size, `A in seconds ${a}`).to.equal(8);
        expect(new Set(b).size, `B in seconds ${b}`).to.equal(2);
        // A budget shared by the host would put all ten in ten distinct seconds.
        expect(
          b.some((sec) => a.includes(sec)),
          `A ${a}, B ${b}`,
        ).to.equal(true);
      } finally {
        await host.stop();
      }
    });
  });

  describe("a delivery that waits long", () => {
    const SUGGEST_AT = 40;
    const env = new DeliveryEnv();
    let temporal: DevServer;

    before(async () => {
      // The server suggests continue-as-new past SUGGEST_AT events (4 096 by default).
      temporal = await startDevServer({
        searchAttributes: searchAttributeCliArgs(),
        port: await freePort(),
        headless: true,
        logFile: path.join(await mkdtemp(path.join(tmpdir(), "etp-history-")), "server.log"),
        dynamicConfig: { "limit.historyCount.suggestContinueAsNew": String(SUGGEST_AT) },
      });
      await env.start(["--ratelimit-addr", ratelimit.grpcAddress], temporal.address);
    });
    after(async () => {
      await env.stop();
      await temporal?.stop();
    });

    it("continues as new while waiting, keeping each run's history bounded", async () => {
      const config = await env.createConfig({ endpoint: receiver.url, eventTypes: ["ledger.patient"] });
      const events = Array.from({ length: 8 }, () => env.event({ type: "patient" }));
      for (const e of events) await env.publish(e);
      const results = [];
      for (const e of events) results.push(await env.result(config.id, e.idempotency_key, 60_000));
      expect(results.map((r) => r.status)).to.deep.equal(events.map(() => "success"));

      let continued = 0;
      let longest = 0;
      for (const e of events) {
        const workflowId = env.workflowId(config.id, e.idempotency_key);
        for await (const run of env.temporal.workflow.list({ query: `WorkflowId = "${workflowId}"` })) {
          const history = await env.temporal.workflow.getHandle(workflowId, run.runId).fetchHistory();
          longest = Math.max(longest, history.events?.length ?? 0);
          if (run.status.name === "CONTINUED_AS_NEW") continued++;
        }
      }
      // The last of eight waits about seven seconds, some 75 events in one run without the hand-over.
      expect(continued, "runs handed over").to.be.at.least(1);
      expect(longest, "events in the longest run").to.be.at.most(SUGGEST_AT + 15);
      const rows = await env.attempts(config.id);
      expect(rows.map((r) => r.status)).to.deep.equal(events.map(() => "success"));
    });
  });
});
