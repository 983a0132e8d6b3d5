import { expect } from "chai";
import pg from "pg";
import { DeliveryEnv } from "../support/delivery-env.js";
import { Receiver } from "../support/receiver.js";
import { TcpBalancer } from "../support/tcp-balancer.js";
import { startProductionServer, type TemporalCluster } from "../support/temporal.js";

const EVENTS = Number(process.env.CLUSTER_EVENTS ?? 300);
const RATE_PER_S = 10;

/**
 * Deliveries on a two-node cluster of the production Temporal server (shared
 * PostgreSQL, membership through its cluster_membership table), its frontends
 * behind a TCP balancer as in production; a node is killed -9 while events
 * keep arriving at 10/s: first node 1, then (after it came back) node 0. The
 * survivor takes over the dead node's history shards and task-queue partitions
 * once membership notices the loss; clients reconnect through the balancer.
 */
describe("a two-node Temporal cluster losing a node mid-run", function () {
  this.timeout(600_000);
  let cluster: TemporalCluster;
  let balancer: TcpBalancer;
  const env = new DeliveryEnv();
  const receiver = new Receiver();

  before(async () => {
    cluster = await startProductionServer("temporal_cluster", 2);
    balancer = await new TcpBalancer(cluster.frontends).start();
    await receiver.start();
    await env.start(["--min-backoff-delay", "500ms", "--max-backoff-delay", "2s"], balancer.address);
  });

  after(async () => {
    await env.stop();
    await receiver.stop();
    await balancer?.stop();
    await cluster?.stop();
  });

  for (const node of [1, 0]) {
    it(`loses no delivery and duplicates no attempt row when node ${node} dies, and resumes within a bound`, async () => {
      if (node === 0) await cluster.restart(1); // the first case's victim rejoins
      const figures = await runThroughKill(node);
      console.log(`      node ${node} killed: ${JSON.stringify(figures)}`);
      // The bound: within 30 s of the kill every new event is delivered in under a second again.
      expect(figures.recoveredAfterKillMs, JSON.stringify(figures)).to.be.below(30_000);
    });
  }

  /** Publishes EVENTS events at RATE_PER_S, killing `node` a third of the way; checks and measures. */
  async function runThroughKill(node: number) {
    const type = `cluster_${node}`;
    const { id: configId } = await env.createConfig({
      endpoint: receiver.url.replace("/hook", `/${type}`),
      eventTypes: [`ledger.${type}`],
    });
    const published = new Map<string, number>();
    const killAt = Math.floor(EVENTS / 3);
    let killedAt = 0;
    for (let i = 0; i < EVENTS; i++) {
      if (i === killAt) {
        await cluster.kill(node);
        killedAt = Date.now();
      }
      const event = env.event({ type: type.toUpperCase(), idempotency_key: `${type}-${i}` });
      await env.publish(event);
      published.set(event.idempotency_key, Date.now());
      await new Promise((r) => setTimeout(r, 1000 / RATE_PER_S));
    }
    for (const key of published.keys()) {
      const result = await env.result(configId, key, 240_000);
      expect(result.status, key).to.equal("success");
    }

    // Every delivery has exactly one success row and no repeated (webhook, attempt) pair.
    const client = new pg.Client({ connectionString: env.api.db.url });
    await client.connect();
    const { rows } = await client.query(
      `SELECT webhook_id, retry_attempt, status::text AS status FROM attempts WHERE config_id = $1`,
      [configId],
    );
    await client.end();
    const pairs = rows.map((r) => `${r.webhook_id}/${r.retry_attempt}`);
    expect(new Set(pairs).size, "duplicated attempt rows").to.equal(pairs.length);
    expect(rows.filter((r) => r.status === "success")).to.have.length(EVENTS);

    // Latency of each event from publish to its first receipt, before and after the kill.
    const requests = receiver.requests.filter((r) => r.path === `/${type}`);
    const firstReceipt = new Map<string, number>();
    for (const req of requests) {
      const key = JSON.parse(req.body).idempotency_key as string;
      if (!firstReceipt.has(key)) firstReceipt.set(key, req.at);
    }
    expect([...firstReceipt.keys()].sort()).to.deep.equal([...published.keys()].sort());
    const keys = [...published.keys()];
    const latency = (k: string) => firstReceipt.get(k)! - published.get(k)!;
    const sorted = (ks: string[]) => ks.map(latency).sort((a, b) => a - b);
    const before = sorted(keys.slice(0, killAt));
    const after = sorted(keys.slice(killAt));
    // The first event after the kill from which every later one took under a second.
    const lastSlow = keys.slice(killAt).findLastIndex((k) => latency(k) >= 1000);
    const recoveredKey = keys[killAt + lastSlow + 1];
    return {
      events: EVENTS,
      repeatedPosts: requests.length - EVENTS,
      beforeKillMs: { p50: before[before.length >> 1], max: before.at(-1) },
      afterKillMs: { p50: after[after.length >> 1], max: after.at(-1) },
      recoveredAfterKillMs: recoveredKey ? published.get(recoveredKey)! - killedAt : Number.POSITIVE_INFINITY,
    };
  }
});
