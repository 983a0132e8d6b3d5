import { randomBytes } from "node:crypto";
import type { ServerResponse } from "node:http";
import { Client, Connection } from "@temporalio/client";
import { expect } from "chai";
import { connect, type NatsConnection } from "nats";
import { auditDeliveries, waitUntilDelivered, workflowsNotSucceeded } from "../support/delivery-audit.js";
import { HealthWatch } from "../support/health-watch.js";
import { PrivatePostgres } from "../support/private-postgres.js";
import { type Received, Receiver } from "../support/receiver.js";
import { startWebhooks, type WebhooksUnderTest } from "../support/webhooks-server.js";

const EVENTS = 200;
/** How long the database stays down: long enough for sends, retries and consumer starts to hit it. */
const DOWN_MS = 3000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Issue 34, point 7: the database the service uses (a PostgreSQL cluster of the test's
 * own, so the shared one stays up for other tests) restarted while 200 deliveries are in
 * flight: first sends, retries waiting on their timer, messages being consumed.
 */
describe("PostgreSQL restarted under 200 deliveries in flight", function () {
  this.timeout(180_000);
  let postgres: PrivatePostgres;
  let receiver: Receiver;
  let api: WebhooksUnderTest;
  let nats: NatsConnection;
  let temporal: Client;
  let watch: HealthWatch;
  const topic = `events-${randomBytes(4).toString("hex")}`;
  const stream = `TEST_${randomBytes(4).toString("hex").toUpperCase()}`;

  after(async () => {
    await watch?.stop();
    await api?.stop();
    await receiver?.stop();
    await temporal?.connection.close();
    await (await nats?.jetstreamManager())?.streams.delete(stream).catch(() => {});
    await nats?.close();
    await postgres?.destroy();
  });

  it("loses nothing, duplicates no attempt, ends every delivery, and health reports the outage", async () => {
    postgres = await PrivatePostgres.create();
    receiver = await new Receiver().start();
    // Even events fail their first POST (500), so they wait for a retry across the restart.
    const answered = new Set<Received>();
    const failedOnce = new Set<string>();
    // Answers take 300 ms, so some fifteen POSTs are in flight whenever the database stops.
    receiver.respond = (req, res) => setTimeout(() => answer(req, res), 300);
    const answer = (req: Received, res: ServerResponse) => {
      const id = String(req.headers["svc-webhook-id"]);
      const flaky = Number(JSON.parse(req.body).payload.i) % 2 === 0;
      if (flaky && !failedOnce.has(id)) {
        failedOnce.add(id);
        res.writeHead(500).end("not yet");
        return;
      }
      answered.add(req);
      res.writeHead(200).end("ok");
    };
    api = await startWebhooks({
      worker: true,
      db: { url: postgres.url, name: "postgres", drop: async () => {} },
      args: [
        "--auto-migrate",
        "--broker-topics",
        topic,
        "--nats-stream",
        stream,
        "--nats-consumer",
        `test-${stream.toLowerCase()}`,
        "--audit-topic",
        "",
        "--min-backoff-delay",
        "2s",
        "--max-backoff-delay",
        "2s",
        // A message whose starts fail during the outage comes back after 2 s, then every 5 s.
        "--broker-redelivery-backoff",
        "2s,5s",
      ],
    });
    const created = await api.call("POST", "/configs", {
      endpoint: receiver.url,
      eventTypes: ["ledger.failure"],
    });
    expect(created.status, created.text).to.equal(200);
    const configId: string = created.body.data.id;
    nats = await connect({ servers: "nats://127.0.0.1:4222" });
    temporal = new Client({ connection: await Connection.connect({ address: api.temporalAddress }) });
    watch = new HealthWatch(`${api.url}/_healthcheck`).start();

    // 200 events at a steady 50/s; the database goes down when half are out.
    const run = randomBytes(3).toString("hex");
    const keys = Array.from({ length: EVENTS }, (_, i) => `pg-${run}-${i}`);
    const js = nats.jetstream();
    const t: Record<string, number> = {};
    let restart: Promise<void> | undefined;
    t.firstPublish = Date.now();
    for (const [i, key] of keys.entries()) {
      if (i === EVENTS / 2)
        restart = (async () => {
          t.stop = Date.now();
          await postgres.stop();
          t.down = Date.now();
          await sleep(DOWN_MS);
          await postgres.start();
          t.up = Date.now();
        })();
      await js.publish(
        topic,
        JSON.stringify({ idempotency_key: key, app: "ledger", type: "failure", payload: { i } }),
      );
      await sleep(20);
    }
    await restart;

    const audit = () =>
      auditDeliveries(postgres.url, configId, keys, receiver.requests, (r) => answered.has(r));
    const result = await waitUntilDelivered(audit, EVENTS, 120_000);
    t.ended = Date.now();
    // Health must come back by itself; give it a bounded while after the deliveries ended.
    for (const deadline = Date.now() + 30_000; !watch.firstHealthy(t.up!) && Date.now() < deadline; )
      await sleep(200);
    await watch.stop();

    const reported = watch.firstFailure("database", t.stop!);
    const recovered = watch.firstHealthy(t.up!);
    const figures = {
      outageMs: t.up! - t.stop!,
      healthReportedAfterMs: reported ? reported.at - t.stop! : null,
      healthRecoveredAfterUpMs: recovered ? recovered.at - t.up! : null,
      allEndedAfterUpMs: t.ended - t.up!,
      attemptRows: result.rows,
      duplicatePosts: result.duplicatePosts,
      firstPostsFailedOnPurpose: failedOnce.size,
      databaseReasons: watch.reasons("database"),
      rowsWrittenAfterTheDatabaseCameBack:
        api.process.output.split("attempt row written after the database came back").length - 1,
      otherFailedChecks: ["temporal", "worker", "broker"].flatMap((c) =>
        watch.reasons(c).map((r) => `${c}: ${r}`),
      ),
    };
    console.log(`      figures: ${JSON.stringify(figures)}`);

    expect(result.lost, "events never delivered").to.deep.equal([]);
    expect(result.duplicateRows, "duplicate (webhook_id, retry_attempt) rows").to.equal(0);
    expect(result.queued, "rows still queued").to.equal(0);
    expect(result.deliveries).to.equal(EVENTS);
    expect(result.notSucceeded, "deliveries whose last row is not success").to.equal(0);
    expect(result.duplicatePosts, "the same attempt POSTed more than once").to.equal(0);
    expect(reported, "a 503 naming the database while it was down").to.not.equal(undefined);
    expect(reported!.sent, "that 503 was asked for while the database was down").to.be.below(t.up!);
    expect(recovered, "health back to 200 by itself").to.not.equal(undefined);
    expect(watch.samples.at(-1)!.status).to.equal(200);
    const ids = keys.map((key) => `delivery:${configId}:${key}`);
    expect(await workflowsNotSucceeded(temporal, ids), "workflows not ended in success").to.deep.equal([]);
  });
});
