// tags: @long (over 45 s: among the first files the parallel suite starts)
import { randomBytes } from "node:crypto";
import { expect } from "chai";
import { connect, type NatsConnection } from "nats";
import pg from "pg";
import { HUNG_MS } from "../support/outage-checks.js";
import { Receiver } from "../support/receiver.js";
import { until } from "../support/until.js";
import { startWebhooks, type WebhooksUnderTest } from "../support/webhooks-server.js";
import { WipeableTemporal } from "../support/wipeable-temporal.js";

const KEYS = 6;
const PER_KEY = 30;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The Temporal server (a dev server of the test's own) hung (SIGSTOP) while an ordered
 * config's events are consumed, sequencers send and heads wait for their retries (every
 * third event's first POST fails): once it resumes, every key's events succeed in stream
 * order, none is lost, and no attempt is POSTed twice (a key's backlog is rows: the hang
 * only delays it).
 */
describe("ordered delivery keeps each key's order across a Temporal hang (SIGSTOP)", function () {
  this.timeout(240_000);
  let temporalServer: WipeableTemporal;
  let receiver: Receiver;
  let api: WebhooksUnderTest;
  let nats: NatsConnection;
  const topic = `events-${randomBytes(4).toString("hex")}`;
  const stream = `TEST_${randomBytes(4).toString("hex").toUpperCase()}`;

  after(async () => {
    temporalServer?.signal("SIGCONT"); // a failed run must not leave it stopped
    await api?.stop();
    await receiver?.stop();
    await (await nats?.jetstreamManager())?.streams.delete(stream).catch(() => {});
    await nats?.close();
    await temporalServer?.stop();
  });

  const payloadOf = (body: string) => (JSON.parse(body) as { payload: { key: number; seq: number } }).payload;

  it("succeeds every key's events in stream order, none lost, no attempt POSTed twice", async () => {
    temporalServer = await new WipeableTemporal().start();
    receiver = await new Receiver().start();
    const failedOnce = new Set<string>();
    const succeeded: { key: number; seq: number }[] = [];
    receiver.respond = (req, res) => {
      const p = payloadOf(req.body);
      const id = `${p.key}-${p.seq}`;
      if (p.seq % 3 === 0 && !failedOnce.has(id)) {
        failedOnce.add(id);
        return void res.writeHead(500).end();
      }
      succeeded.push(p);
      res.writeHead(200).end();
    };
    api = await startWebhooks({
      worker: true,
      temporalAddress: temporalServer.address,
      args: [
        ...[
          "--broker-topics",
          topic,
          "--nats-stream",
          stream,
          "--nats-consumer",
          `ot-${stream.toLowerCase()}`,
        ],
        ...["--audit-topic", ""],
        ...["--min-backoff-delay", "1s", "--max-backoff-delay", "2s"],
        // A message whose hand-over fails during the hang comes back after 2 s, then every 5 s.
        ...["--broker-redelivery-backoff", "2s,5s"],
      ],
    });
    const created = await api.call("POST", "/configs", {
      endpoint: receiver.url,
      eventTypes: ["ledger.ordered_hung"],
      ordering: { enabled: true },
    });
    expect(created.status, created.text).to.equal(200);
    const configId: string = created.body.data.id;
    nats = await connect({ servers: "nats://127.0.0.1:4222" });
    const js = nats.jetstream();

    // About 60 events/s, one key after the other; Temporal hangs when half are out.
    let hang: Promise<void> | undefined;
    for (let seq = 1; seq <= PER_KEY; seq++) {
      if (seq === PER_KEY / 2)
        hang = (async () => {
          temporalServer.signal("SIGSTOP");
          await sleep(HUNG_MS);
          temporalServer.signal("SIGCONT");
        })();
      for (let key = 0; key < KEYS; key++) {
        await js.publish(
          topic,
          JSON.stringify({
            idempotency_key: `oth-${key}-${seq}`,
            app: "ledger",
            type: "ORDERED_HUNG",
            ordering_key: `key-${key}`,
            payload: { key, seq },
          }),
        );
        await sleep(15);
      }
    }
    await hang;

    await until("every event succeeded", () => succeeded.length >= KEYS * PER_KEY, 150_000).catch(() => {});
    for (let key = 0; key < KEYS; key++)
      expect(
        succeeded.filter((p) => p.key === key).map((p) => p.seq),
        `key ${key}: its successes in order, each once`,
      ).to.deep.equal(Array.from({ length: PER_KEY }, (_, i) => i + 1));

    // Each webhook's POSTs are its attempt rows: no attempt went twice.
    const posts = new Map<string, number>();
    for (const r of receiver.requests) {
      const id = String(r.headers["svc-webhook-id"]);
      posts.set(id, (posts.get(id) ?? 0) + 1);
    }
    const db = new pg.Client({ connectionString: api.db.url });
    await db.connect();
    try {
      const { rows } = await db.query<{ webhook_id: string; n: number }>(
        "SELECT webhook_id, count(*)::int AS n FROM attempts WHERE config_id = $1 GROUP BY webhook_id",
        [configId],
      );
      expect(rows).to.have.length(KEYS * PER_KEY);
      for (const { webhook_id, n } of rows)
        expect(posts.get(webhook_id), `POSTs of ${webhook_id}`).to.equal(n);
    } finally {
      await db.end();
    }
  });
});
