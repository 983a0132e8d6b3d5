import { expect } from "chai";
import pg from "pg";
import { webhookIdFor } from "../../core/event-message.js";
import { DeliveryEnv } from "../support/delivery-env.js";
import { metric } from "../support/poison.js";
import { Receiver } from "../support/receiver.js";
import { startWebhooks } from "../support/webhooks-server.js";
import { WipeableTemporal } from "../support/wipeable-temporal.js";

/**
 * Temporal's state is lost mid-run (the dev server restarted in memory, as a
 * namespace recreated or a cluster restored from an old backup would be):
 * every queued delivery is restarted from its row by reconciliation and
 * completes, with no attempt repeated and nothing left queued.
 */
describe("reconciliation after Temporal lost its state", function () {
  this.timeout(180_000);
  // RECONCILE_DELIVERIES=200 measures a bigger wipe by hand; CI runs 20.
  const DELIVERIES = Number(process.env.RECONCILE_DELIVERIES ?? 20);
  const RECONCILE_FLAGS = [
    ...["--min-backoff-delay", "3s", "--max-backoff-delay", "3s"],
    ...["--retry-period", "300ms", "--reconcile-grace", "1s", "--max-attempts", "10"],
  ];
  const env = new DeliveryEnv();
  const temporal = new WipeableTemporal();
  let receiver: Receiver;
  let db: pg.Client;

  before(async () => {
    await temporal.start();
    await env.start(RECONCILE_FLAGS, temporal.address);
    receiver = await new Receiver().start();
    db = new pg.Client({ connectionString: env.api.db.url });
    await db.connect();
  });
  after(async () => {
    await db?.end();
    await receiver?.stop();
    await env.stop();
    await temporal?.stop();
  });

  const queued = async (configId: string) =>
    Number(
      (
        await db.query(
          "SELECT count(*) AS n FROM attempts WHERE config_id = $1 AND status IN ('to retry', 'retrying')",
          [configId],
        )
      ).rows[0].n,
    );

  /** Waits (at most 60 s) until all DELIVERIES of the config wait for a retry. */
  const untilAllQueued = async (configId: string) => {
    const deadline = Date.now() + 60_000;
    while ((await queued(configId)) < DELIVERIES) {
      if (Date.now() > deadline) throw new Error(`only ${await queued(configId)} deliveries queued`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  it("restarts every queued delivery from its row; each completes once, nothing stays queued", async () => {
    // Each delivery fails twice, then succeeds: the wipe comes while all wait for a retry.
    const calls = new Map<string, number>();
    receiver.respond = (req, res) => {
      const id = String(req.headers["svc-webhook-id"]);
      const n = (calls.get(id) ?? 0) + 1;
      calls.set(id, n);
      res.writeHead(n <= 2 ? 500 : 200).end();
    };
    const config = await env.createConfig({ endpoint: receiver.url, eventTypes: ["ledger.wiped"] });
    for (let i = 0; i < DELIVERIES; i++) await env.publish(env.event({ type: "wiped" }));
    await untilAllQueued(config.id);

    await temporal.wipe();
    const wipedAt = Date.now();
    const before = await queued(config.id);
    while ((await queued(config.id)) > 0) {
      if (Date.now() - wipedAt > 90_000)
        throw new Error(`${await queued(config.id)} deliveries still queued`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const repairMs = Date.now() - wipedAt;
    console.log(`      queued before the wipe: ${before}; all closed ${repairMs} ms after it`);

    const { rows } = await db.query(
      `SELECT webhook_id, array_agg(status::text ORDER BY retry_attempt) AS statuses,
              array_agg(retry_attempt ORDER BY retry_attempt) AS tries
         FROM attempts WHERE config_id = $1 GROUP BY webhook_id`,
      [config.id],
    );
    expect(rows).to.have.length(DELIVERIES);
    for (const r of rows) {
      expect(r.tries, r.webhook_id).to.deep.equal([...r.tries.keys()]); // 0, 1, 2…: no gap, no repeat
      expect(r.statuses.at(-1), r.webhook_id).to.equal("success");
      // One 2xx per delivery reached the receiver: no delivery was sent twice after its success.
      expect(calls.get(r.webhook_id), r.webhook_id).to.equal(3);
    }
    const metrics = await (await fetch(`${env.api.url}/metrics`)).text();
    expect(metrics).to.match(/webhooks_reconciliation_total\{outcome="restarted"\} [1-9]/);
  });

  it("counts each repair once when two processes reconcile the same rows", async () => {
    // A second reconciling process on the same database, Temporal and task queue.
    const second = await startWebhooks({
      worker: true,
      db: env.api.db,
      temporalAddress: temporal.address,
      args: [...RECONCILE_FLAGS, "--task-queue", env.api.taskQueue, "--no-consume", "--audit-topic", ""],
    });
    try {
      const calls = new Map<string, number>();
      receiver.respond = (req, res) => {
        const id = String(req.headers["svc-webhook-id"]);
        const n = (calls.get(id) ?? 0) + 1;
        calls.set(id, n);
        res.writeHead(n === 1 ? 500 : 200).end();
      };
      const config = await env.createConfig({ endpoint: receiver.url, eventTypes: ["ledger.twice"] });
      for (let i = 0; i < DELIVERIES; i++) await env.publish(env.event({ type: "twice" }));
      await untilAllQueued(config.id);
      const counts = async () => {
        const out: Record<string, number> = {};
        for (const outcome of ["restarted", "closed", "running", "ended"])
          out[outcome] =
            (await metric(env.api, "webhooks_reconciliation_total", { outcome })) +
            (await metric(second, "webhooks_reconciliation_total", { outcome }));
        return out;
      };
      const before = await counts();

      await temporal.wipe();
      const wipedAt = Date.now();
      while ((await queued(config.id)) > 0) {
        if (Date.now() - wipedAt > 90_000)
          throw new Error(`${await queued(config.id)} deliveries still queued`);
        await new Promise((r) => setTimeout(r, 200));
      }
      const after = await counts();
      const delta = Object.fromEntries(Object.entries(after).map(([k, v]) => [k, v - before[k]!]));
      console.log(`      two reconcilers after the wipe: ${JSON.stringify(delta)}`);
      // Every delivery restarted once and succeeded: `restarted` counts the workflows that
      // started, whichever process started each; nothing was closed.
      const { rows } = await db.query(
        `SELECT webhook_id, array_agg(retry_attempt ORDER BY retry_attempt) AS tries,
                (array_agg(status::text ORDER BY retry_attempt DESC))[1] AS last
           FROM attempts WHERE config_id = $1 GROUP BY webhook_id`,
        [config.id],
      );
      expect(rows).to.have.length(DELIVERIES);
      for (const r of rows) {
        expect(r, r.webhook_id).to.deep.include({ tries: [0, 1], last: "success" });
        expect(calls.get(r.webhook_id), r.webhook_id).to.equal(2);
      }
      expect(delta.restarted).to.equal(DELIVERIES);
      expect(delta.closed).to.equal(0);
    } finally {
      await second.stop();
    }
  });

  it("restarts a row written before rows named their workflow under the delivery's own id, never a second one", async () => {
    receiver.respond = (_req, res) => res.writeHead(200).end();
    const config = await env.createConfig({ endpoint: receiver.url, eventTypes: ["ledger.legacy"] });
    const key = `legacy-${Date.now()}`;
    const workflowId = env.workflowId(config.id, key);
    const webhookId = webhookIdFor(workflowId);
    const event = env.event({ type: "legacy", idempotency_key: key });
    const payload = JSON.stringify({ ...event, type: "ledger.legacy", app: "ledger" });
    // A queued first attempt as an older version wrote it: no workflow_id, and no workflow
    // in Temporal (its state lost), overdue.
    await db.query(
      `INSERT INTO attempts (id, webhook_id, config_id, config, payload, status_code, retry_attempt, status,
                             next_retry_after, error, created_at, updated_at)
       VALUES (gen_random_uuid(), $1, $2, '{}', $3, 500, 0, 'to retry', now() - interval '5 s', 'HTTP 500',
               now() - interval '10 s', now() - interval '10 s')`,
      [webhookId, config.id, payload],
    );
    const deadline = Date.now() + 30_000;
    while ((await queued(config.id)) > 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 200));
    expect(await queued(config.id)).to.equal(0);
    // Restarted as the delivery it is: the same id a redelivery or a dead-letter replay would
    // start, so neither can make a second delivery of it.
    const result = await env.temporal.workflow.getHandle(workflowId).result();
    expect(result).to.include({ webhookId, status: "success" });
    const got = receiver.requests.filter((r) => r.headers["svc-webhook-id"] === webhookId);
    expect(got).to.have.length(1);
  });
});
