// tags: @temporal-server-only (only on the production Temporal server, npm run test:temporal-server:
// Temporal's own heartbeat timeouts start the second execution)
import type { ServerResponse } from "node:http";
import { expect } from "chai";
import pg from "pg";
import { processFamily } from "../../bench/support/proc.js";
import { DeliveryEnv } from "../support/delivery-env.js";
import { freePort } from "../support/ports.js";
import { ServiceProcess } from "../support/process.js";
import { type RateLimitUnderTest, startRateLimitService } from "../support/ratelimit-service.js";
import { type Received, Receiver } from "../support/receiver.js";

/**
 * One attempt number of one delivery is POSTed by at most one live send execution: the
 * send claims (webhook id, retry attempt) in the database before its POST and heartbeats
 * through every step, so Temporal starting a second execution while the first still runs
 * finds the claim taken and backs off.
 */
/** A process and its children (serve may run API processes beside the worker). */
const signalAll = (pid: number, signal: NodeJS.Signals) => {
  for (const p of processFamily(pid)) process.kill(p, signal);
};

describe("a live worker never POSTs the same attempt twice", function () {
  this.timeout(240_000);

  /** POSTs per (webhook id, attempt), from the receiver's point of view (id + body's own key). */
  const perWebhook = (requests: Received[]) => {
    const counts = new Map<string, number>();
    for (const r of requests) {
      const id = String(r.headers["svc-webhook-id"]);
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    return counts;
  };

  const query = async (env: DeliveryEnv, text: string) => {
    const client = new pg.Client({ connectionString: env.api.db.url });
    await client.connect();
    try {
      return (await client.query(text)).rows;
    } finally {
      await client.end();
    }
  };
  const queuedTwice = (env: DeliveryEnv) =>
    query(
      env,
      `SELECT webhook_id FROM attempts WHERE status IN ('to retry', 'retrying')
        GROUP BY webhook_id HAVING count(*) > 1`,
    );
  const duplicateRows = (env: DeliveryEnv) =>
    query(env, "SELECT webhook_id, retry_attempt FROM attempts GROUP BY 1, 2 HAVING count(*) > 1");

  describe("a second execution started while the first is still sending", () => {
    const env = new DeliveryEnv();
    let receiver: Receiver;
    let extra: ServiceProcess | undefined;
    let extraPort = 0;
    let held: ServerResponse | undefined;

    before(async () => {
      receiver = await new Receiver().start();
      // The first POST is held open; it is answered once the test says so.
      receiver.respond = (_req, res) => {
        if (!held && receiver.requests.length === 1) held = res;
        else res.writeHead(200).end("ok");
      };
      // One send slot: while it holds the first POST, this process polls for no other send,
      // so the retry cannot go to a poll the paused process left open on the server.
      // Queue mode: the first send is an activity Temporal can start a second execution of.
      await env.start(["--send-mode", "queue", "--send-timeout", "2m", "--max-concurrent-sends", "1"]);
    });
    after(async () => {
      if (env.api?.process.child.pid) signalAll(env.api.process.child.pid, "SIGCONT");
      if (held && !held.headersSent) held.writeHead(200).end();
      await extra?.stop();
      await receiver?.stop();
      await env.stop();
    });

    it("lets the second execution find the claim taken, wait, and return the first one's row", async () => {
      const config = await env.createConfig({ endpoint: receiver.url });
      const event = env.event();
      await env.publish(event);
      await receiver.waitFor(1);
      // The first execution's process stops mid-POST: no heartbeat reaches Temporal, which
      // starts the send again after its heartbeat timeout (20 s), on the other process.
      const pid = env.api.process.child.pid!;
      signalAll(pid, "SIGSTOP");
      // A second process polling the same sends queue, to take Temporal's retry of the send.
      extraPort = await freePort();
      extra = new ServiceProcess("webhooks", [
        "worker",
        ...["--listen", `127.0.0.1:${extraPort}`],
        ...["--storage-sqldb-conn-string", env.api.db.url],
        ...["--temporal-address", env.api.temporalAddress],
        ...["--task-queue", env.api.taskQueue, "--task-queues", "sends", "--no-consume"],
        ...["--send-timeout", "2m"],
      ]);
      await extra.waitHealthy(`http://127.0.0.1:${extraPort}/_healthcheck`);
      const claimedElsewhere = async () => {
        const text = await (await fetch(`http://127.0.0.1:${extraPort}/metrics`)).text();
        return Number(/^webhooks_sends_claimed_elsewhere_total (\d+)/m.exec(text)?.[1] ?? 0);
      };
      const deadline = Date.now() + 60_000;
      while ((await claimedElsewhere()) === 0 && receiver.requests.length === 1 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 500));
      expect(receiver.requests, "the second execution POSTed again").to.have.length(1);
      expect(await claimedElsewhere(), "the second execution never ran").to.be.at.least(1);
      // The first comes back and its POST is answered: it writes the row, and the second
      // execution's next try returns that row.
      signalAll(pid, "SIGCONT");
      held!.writeHead(200).end("ok");
      const result = await env.result(config.id, event.idempotency_key, 90_000);
      expect(result.status).to.equal("success");
      expect(receiver.requests).to.have.length(1);
      const rows = await env.attempts(config.id);
      expect(rows.map((r) => [r.retry_attempt, r.status])).to.deep.equal([[0, "success"]]);
    });
  });

  describe("the rate limit service hanging (SIGSTOP 40 s) while 30 sends of one config are due", () => {
    const env = new DeliveryEnv();
    let receiver: Receiver;
    let ratelimit: RateLimitUnderTest;

    before(async () => {
      ratelimit = await startRateLimitService(
        "domain: webhooks\ndescriptors:\n  - key: config_id\n    rate_limit: { unit: second, requests_per_unit: 1000 }\n",
      );
      receiver = await new Receiver().start();
      // Every second send of each delivery fails once, so retries are due too.
      const seen = new Set<string>();
      receiver.respond = (req, res) => {
        const key = String(req.headers["svc-webhook-id"]);
        const first = !seen.has(key);
        seen.add(key);
        res.writeHead(first && receiver.requests.length % 2 === 0 ? 503 : 200).end();
      };
      await env.start(["--ratelimit-addr", ratelimit.grpcAddress]);
    });
    after(async () => {
      ratelimit?.signal("SIGCONT");
      await receiver?.stop();
      await ratelimit?.stop();
      await env.stop();
    });

    it("sends each attempt once, ends every delivery, and never queues a delivery twice", async () => {
      const config = await env.createConfig({ endpoint: receiver.url });
      const warm = env.event();
      await env.publish(warm);
      expect((await env.result(config.id, warm.idempotency_key)).status).to.equal("success");
      ratelimit.signal("SIGSTOP");
      const events = Array.from({ length: 30 }, () => env.event());
      try {
        for (const e of events) await env.publish(e);
        await new Promise((r) => setTimeout(r, 40_000));
      } finally {
        ratelimit.signal("SIGCONT");
      }
      for (const e of events)
        expect((await env.result(config.id, e.idempotency_key, 90_000)).status).to.equal("success");
      // Each (webhook, attempt) reached the receiver once: a delivery's POSTs are its rows.
      const rows = await env.attempts(config.id);
      const posts = perWebhook(receiver.requests);
      for (const [webhookId, count] of posts)
        expect(count, `POSTs of ${webhookId}`).to.equal(
          rows.filter((r) => r.webhook_id === webhookId).length,
        );
      expect(posts.size).to.equal(events.length + 1);
      expect(await duplicateRows(env)).to.deep.equal([]);
      expect(await queuedTwice(env)).to.deep.equal([]);
      expect(rows.filter((r) => r.status === "to retry" || r.status === "retrying")).to.deep.equal([]);
    });
  });

  describe("database connections exhausted (a pool of 2) while 40 sends are due", () => {
    const env = new DeliveryEnv();
    let receiver: Receiver;

    before(async () => {
      receiver = await new Receiver().start();
      await env.start(["--storage-sqldb-pool-size", "2"]);
    });
    after(async () => {
      await receiver?.stop();
      await env.stop();
    });

    it("sends each delivery once and ends every one", async () => {
      const config = await env.createConfig({ endpoint: receiver.url });
      const events = Array.from({ length: 40 }, () => env.event());
      await Promise.all(events.map((e) => env.publish(e)));
      for (const e of events)
        expect((await env.result(config.id, e.idempotency_key, 90_000)).status).to.equal("success");
      const posts = perWebhook(receiver.requests);
      expect(posts.size).to.equal(events.length);
      expect(
        [...posts.values()].every((n) => n === 1),
        "a delivery was POSTed twice",
      ).to.equal(true);
      expect(await duplicateRows(env)).to.deep.equal([]);
    });
  });
});
