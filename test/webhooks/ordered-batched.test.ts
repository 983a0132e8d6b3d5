import type { ServerResponse } from "node:http";
import { expect } from "chai";
import pg from "pg";
import { BATCH_IDS_HEADER } from "../../activities/batch-body.js";
import { DeliveryEnv } from "../support/delivery-env.js";
import { type Received, Receiver, signedWith } from "../support/receiver.js";
import { waitFor } from "../support/redis-servers.js";

type Sent = { ordering_key: string; payload: { seq: number } };
/** The events of one POST, as the receiver parses them: a batch's array, or a replay's one event. */
const eventsOf = (r: Received): Sent[] => {
  const body = JSON.parse(r.body) as Sent[] | Sent;
  return Array.isArray(body) ? body : [body];
};

/**
 * Ordered configs that batch (docs/webhooks/ordering-and-batching.md), over NATS
 * published at full speed and POST /events: per key the POSTed arrays concatenate to the
 * acceptance order, a failing batch is retried whole before the key's next batch goes, and
 * `block` holds a key after a batch failed for good until skip releases the whole batch.
 */
describe("ordered batched delivery", function () {
  this.timeout(240_000);
  const env = new DeliveryEnv();
  let receiver: Receiver;
  /** Per test: how the receiver answers a POST (to the path of the test's config). */
  let answer: (r: Received, res: ServerResponse) => void = (_r, res) => res.writeHead(200).end("ok");

  before(async () => {
    await env.start(["--min-backoff-delay", "1s", "--max-backoff-delay", "1s", "--max-attempts", "5"]);
    receiver = await new Receiver().start();
    receiver.respond = (r, res) => answer(r, res);
  });
  after(async () => {
    await receiver?.stop();
    await env.stop();
  });

  /** Small batches wait long for a full one: their tests' events (posted one by one) fill them. */
  const config = async (type: string, onFailure: "skip" | "block" = "skip", maxEvents = 50) => {
    const maxWaitMs = maxEvents === 50 ? 200 : 5_000;
    const c = await env.createConfig({
      endpoint: `${receiver.url}/${type}`,
      eventTypes: [`ledger.${type}`],
      ordering: { enabled: true, onFailure },
      batch: { maxEvents, maxWaitMs },
    });
    const posts = () => receiver.requests.filter((r) => r.path === `/hook/${type}`);
    /** The POSTs carrying a key's events (a batch holds one key's events only), in arrival order. */
    const postsOf = (key: string) =>
      posts().filter((p) => {
        const keys = new Set(eventsOf(p).map((e) => e.ordering_key));
        expect(keys.size, "one key per batch").to.equal(1);
        return keys.has(key);
      });
    return { ...c, posts, postsOf };
  };
  const event = (type: string, key: string, seq: number) =>
    env.event({
      type: type.toUpperCase(),
      idempotency_key: `${type}-${key}-${seq}`,
      ordering_key: key,
      payload: { seq },
    });
  const seqs = (posts: Received[]) => posts.flatMap(eventsOf).map((e) => e.payload.seq);
  const range = (n: number) => Array.from({ length: n }, (_, i) => i + 1);
  const batchIds = async (configId: string) => {
    const client = new pg.Client({ connectionString: env.api.db.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ webhook_id: string; status: string; batch_id: string | null }>(
        "SELECT webhook_id, status::text AS status, batch_id FROM attempts WHERE config_id = $1",
        [configId],
      );
      return rows;
    } finally {
      await client.end();
    }
  };
  const keys = async (configId: string, state: string) =>
    (await env.api.call("GET", `/configs/${configId}/ordering-keys?state=${state}`)).body.cursor.data as {
      orderingKey: string;
      headWebhookID: string;
    }[];

  it("delivers 1 000 events of 4 keys published at full speed as ordered batches, each signed, each once", async () => {
    const c = await config("bulk");
    const KEYS = ["a", "b", "c", "d"];
    const PER_KEY = 250;
    // Interleaved, as producers of several keys would publish them.
    const messages = range(PER_KEY).flatMap((seq) => KEYS.map((k) => event("bulk", k, seq)));
    await Promise.all(messages.map((m) => env.publish(m)));
    await waitFor("1 000 events", async () => seqs(c.posts()).length >= 1000, 180_000);
    for (const key of KEYS) {
      const posts = c.postsOf(key);
      // The arrays, one after the other, are the key's events in acceptance order, each once.
      expect(seqs(posts), `key ${key}`).to.deep.equal(range(PER_KEY));
      // ceil(250 / 50) = 5 full batches; a partial one may go after maxWaitMs while the
      // publisher is still at it, so some slack (the issue allows 25 POSTs per 1 000 events).
      expect(posts.length, `POSTs of key ${key}`).to.be.at.most(10);
      for (const p of posts) {
        expect(signedWith(c.secret, p), "batch signature").to.equal(true);
        const ids = String(p.headers[BATCH_IDS_HEADER]).split(",");
        expect(ids).to.have.length(eventsOf(p).length);
        expect(ids.length).to.be.at.most(50);
      }
    }
    expect(c.posts().length).to.be.at.most(25 + 15);
    // The measurement in docs/webhooks/ordering-and-batching.md: POSTs per key.
    process.stderr.write(
      `ordered batched, 4 keys x 250: POSTs per key ${KEYS.map((k) => c.postsOf(k).length).join(", ")}\n`,
    );
    // One success row per event, naming the batch (its POST's svc-webhook-id) it went in.
    await waitFor("1 000 attempt rows", async () => (await batchIds(c.id)).length >= 1000, 60_000);
    const rows = await batchIds(c.id);
    expect(rows).to.have.length(1000);
    expect(rows.every((r) => r.status === "success")).to.equal(true);
    const batchOf = new Map(
      c.posts().flatMap((p) =>
        String(p.headers[BATCH_IDS_HEADER])
          .split(",")
          .map((id) => [id, p.headers["svc-webhook-id"]]),
      ),
    );
    for (const r of rows) expect(r.batch_id, r.webhook_id).to.equal(batchOf.get(r.webhook_id));
  });

  it("delivers 1 000 events of one key in at most 25 POSTs, in order", async () => {
    const c = await config("onekey");
    await Promise.all(range(1000).map((seq) => env.publish(event("onekey", "k", seq))));
    await waitFor("1 000 events", async () => seqs(c.posts()).length >= 1000, 180_000);
    expect(seqs(c.posts())).to.deep.equal(range(1000));
    expect(c.posts().length).to.be.at.most(25);
    process.stderr.write(`ordered batched, 1 key x 1 000: ${c.posts().length} POSTs\n`);
    for (const p of c.posts()) expect(signedWith(c.secret, p), "batch signature").to.equal(true);
  });

  it("retries a failing batch whole, and the key's next batch waits for it", async () => {
    const c = await config("retried", "skip", 3);
    let calls = 0;
    answer = (r, res) => {
      // The first POST of the config (events 1-3) fails once.
      if (r.path === "/hook/retried" && ++calls === 1) return void res.writeHead(500).end("later");
      res.writeHead(200).end("ok");
    };
    try {
      for (const seq of range(6)) {
        const r = await env.api.call("POST", "/events", event("retried", "r", seq));
        expect(r.status, r.text).to.equal(202);
      }
      await waitFor("6 events delivered", async () => seqs(c.posts()).length >= 9, 60_000);
      const posts = c.posts();
      // 500 then 200 for the same batch (same batch id, same events), only then the next.
      expect(seqs(posts)).to.deep.equal([1, 2, 3, 1, 2, 3, 4, 5, 6]);
      expect(posts.map((p) => eventsOf(p).length)).to.deep.equal([3, 3, 3]);
      expect(posts[0]!.headers["svc-webhook-id"]).to.equal(posts[1]!.headers["svc-webhook-id"]);
      expect(posts[2]!.headers["svc-webhook-id"]).to.not.equal(posts[0]!.headers["svc-webhook-id"]);
      // Each event's attempts tell the batch's story: 500 then 200, under the same batch id.
      for (const id of String(posts[0]!.headers[BATCH_IDS_HEADER]).split(",")) {
        await waitFor("the success row", async () => {
          const r = await env.api.call("GET", `/webhooks/${id}`);
          return (r.body.data?.attempts ?? []).length === 2;
        });
        const attempts = (await env.api.call("GET", `/webhooks/${id}`)).body.data.attempts as {
          statusCode: number;
          batchID: string;
        }[];
        expect(attempts.map((a) => a.statusCode).sort()).to.deep.equal([200, 500]);
        expect(new Set(attempts.map((a) => a.batchID))).to.deep.equal(
          new Set([posts[0]!.headers["svc-webhook-id"]]),
        );
      }
    } finally {
      answer = (_r, res) => res.writeHead(200).end("ok");
    }
  });

  it("with block, holds the key after a batch failed for good until skip releases the whole batch", async () => {
    const c = await config("blocked", "block", 2);
    answer = (r, res) => {
      // Events 1 and 2 (one batch) are refused for good; the rest are taken.
      const failing = r.path === "/hook/blocked" && eventsOf(r).some((e) => e.payload.seq <= 2);
      res.writeHead(failing ? 400 : 200).end(failing ? "no" : "ok");
    };
    try {
      const ids: string[] = [];
      for (const seq of range(4)) {
        const r = await env.api.call("POST", "/events", event("blocked", "x", seq));
        expect(r.status, r.text).to.equal(202);
        ids.push(r.body.data.deliveries[0].webhookID);
      }
      await waitFor("key x blocked", async () => (await keys(c.id, "blocked")).length === 1, 60_000);
      const [blocked] = await keys(c.id, "blocked");
      expect(blocked).to.include({ orderingKey: "x", headWebhookID: ids[0] });
      expect(seqs(c.posts())).to.deep.equal([1, 2]);
      const skip = await env.api.call("POST", `/configs/${c.id}/ordering-keys/x/skip`);
      expect(skip.status, skip.text).to.equal(202);
      await waitFor("events 3 and 4", async () => seqs(c.posts()).length >= 4, 60_000);
      // The whole failed batch stays failed and is not sent again; the next batch goes.
      expect(seqs(c.posts())).to.deep.equal([1, 2, 3, 4]);
      await waitFor("4 attempt rows", async () => (await batchIds(c.id)).length >= 4, 30_000);
      const rows = await env.attempts(c.id);
      const status = (id: string) => rows.filter((r) => r.webhook_id === id).map((r) => r.status);
      expect(status(ids[0]!)).to.deep.equal(["failed"]);
      expect(status(ids[1]!)).to.deep.equal(["failed"]);
      expect(status(ids[2]!)).to.deep.equal(["success"]);
      expect(await keys(c.id, "blocked")).to.deep.equal([]);
    } finally {
      answer = (_r, res) => res.writeHead(200).end("ok");
    }
  });

  it("with block, a replay of any event of the failed batch goes first, alone, and releases the key", async () => {
    const c = await config("replayed", "block", 2);
    answer = (r, res) => {
      // The batch of events 1 and 2 is refused for good; the replay (one event, no array) is taken.
      const failing =
        r.path === "/hook/replayed" &&
        Array.isArray(JSON.parse(r.body)) &&
        eventsOf(r).some((e) => e.payload.seq <= 2);
      res.writeHead(failing ? 400 : 200).end(failing ? "no" : "ok");
    };
    try {
      const ids: string[] = [];
      for (const seq of range(4)) {
        const r = await env.api.call("POST", "/events", event("replayed", "y", seq));
        expect(r.status, r.text).to.equal(202);
        ids.push(r.body.data.deliveries[0].webhookID);
      }
      await waitFor("key y blocked", async () => (await keys(c.id, "blocked")).length === 1, 60_000);
      const replay = await env.api.call("POST", `/webhooks/${ids[1]}/replay`, undefined, {
        "idempotency-key": "replay-of-the-second",
      });
      expect(replay.status, replay.text).to.be.oneOf([200, 202]);
      await waitFor("events 3 and 4", async () => seqs(c.posts()).length >= 5, 60_000);
      // The failed batch, then the replay alone, then the next batch.
      expect(c.posts().map((p) => eventsOf(p).map((e) => e.payload.seq))).to.deep.equal([
        [1, 2],
        [2],
        [3, 4],
      ]);
      expect(c.posts()[1]!.headers).to.not.have.property(BATCH_IDS_HEADER);
      expect(await keys(c.id, "blocked")).to.deep.equal([]);
    } finally {
      answer = (_r, res) => res.writeHead(200).end("ok");
    }
  });

  it("closes a batch waiting for its retry, and the events queued behind it, when the config is deactivated", async () => {
    const c = await config("closed", "block", 2);
    answer = (r, res) => {
      if (r.path === "/hook/closed") return void res.writeHead(503, { "retry-after": "300" }).end("later");
      res.writeHead(200).end("ok");
    };
    try {
      const ids: string[] = [];
      for (const seq of range(3)) {
        const r = await env.api.call("POST", "/events", event("closed", "z", seq));
        expect(r.status, r.text).to.equal(202);
        ids.push(r.body.data.deliveries[0].webhookID);
      }
      await waitFor("the batch's first POST", async () => c.posts().length >= 1, 60_000);
      const off = await env.api.call("PUT", `/configs/${c.id}/deactivate`);
      expect(off.status, off.text).to.equal(200);
      // Its retry was 300 s away: the key's workflow passed the close on to the batch.
      for (const id of ids) {
        await waitFor(
          `webhook ${id} closed`,
          async () => {
            const r = await env.api.call("GET", `/webhooks/${id}`);
            return r.body.data?.status === "failed";
          },
          30_000,
        );
        const r = await env.api.call("GET", `/webhooks/${id}`);
        expect(r.body.data.reason, id).to.include("config deactivated");
      }
      expect(c.posts().map((p) => eventsOf(p).map((e) => e.payload.seq))).to.deep.equal([[1, 2]]);
    } finally {
      answer = (_r, res) => res.writeHead(200).end("ok");
    }
  });
});
