import { expect } from "chai";
import pg from "pg";
import { DeliveryEnv } from "../support/delivery-env.js";
import { Receiver } from "../support/receiver.js";
import { startProductionServer, type TemporalCluster } from "../support/temporal.js";

const EVENTS = Number(process.env.CLUSTER_EVENTS ?? 120);
const RATE_PER_S = 10;

/**
 * Deliveries on a two-node cluster of the production Temporal server (shared
 * PostgreSQL, membership through its cluster_membership table); one node is
 * killed -9 while events keep arriving. The clients talk to node 0's frontend;
 * node 1 owns part of the history shards and task-queue partitions, which the
 * survivor takes over once membership notices the loss.
 */
describe("a two-node Temporal cluster losing a node mid-run", function () {
  this.timeout(600_000);
  let cluster: TemporalCluster;
  const env = new DeliveryEnv();
  const receiver = new Receiver();

  before(async () => {
    cluster = await startProductionServer("temporal_cluster", 2);
    await receiver.start();
    await env.start(["--min-backoff-delay", "500ms", "--max-backoff-delay", "2s"], cluster.address);
  });

  after(async () => {
    await env.stop();
    await receiver.stop();
    await cluster?.stop();
  });

  it("loses no delivery, duplicates no attempt row, and resumes within a bound", async () => {
    const { id: configId } = await env.createConfig({ endpoint: receiver.url });
    const published = new Map<string, number>();
    const killAt = Math.floor(EVENTS / 3);
    let killedAt = 0;
    for (let i = 0; i < EVENTS; i++) {
      if (i === killAt) {
        await cluster.kill(1);
        killedAt = Date.now();
      }
      const event = env.event({ idempotency_key: `cluster-${i}` });
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
    const firstReceipt = new Map<string, number>();
    for (const req of receiver.requests) {
      const key = JSON.parse(req.body).idempotency_key as string;
      if (!firstReceipt.has(key)) firstReceipt.set(key, req.at);
    }
    expect([...firstReceipt.keys()].sort()).to.deep.equal([...published.keys()].sort());
    const latency = (keys: string[]) =>
      keys.map((k) => firstReceipt.get(k)! - published.get(k)!).sort((a, b) => a - b);
    const keys = [...published.keys()];
    const before = latency(keys.slice(0, killAt));
    const after = latency(keys.slice(killAt));
    const lastStalled = Math.max(...keys.slice(killAt).map((k) => firstReceipt.get(k)!));
    const resumedAfterMs = Math.max(...after);
    const figures = {
      events: EVENTS,
      repeatedPosts: receiver.requests.length - EVENTS,
      beforeKill: { p50: before[before.length >> 1], max: before.at(-1) },
      afterKill: { p50: after[after.length >> 1], max: after.at(-1) },
      lastDeliveredAfterKillMs: lastStalled - killedAt,
    };
    console.log(`      cluster node loss: ${JSON.stringify(figures)}`);
    // The bound: no event waits more than a minute for the survivor to take over.
    expect(resumedAfterMs, JSON.stringify(figures)).to.be.below(60_000);
  });
});
