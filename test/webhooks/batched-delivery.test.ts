// tags: @temporal-server (also run on the production Temporal server: npm run test:temporal-server)
import type { ServerResponse } from "node:http";
import { expect } from "chai";
import { BATCH_IDS_HEADER } from "../../activities/batch-body.js";
import { DeliveryEnv } from "../support/delivery-env.js";
import { type Received, Receiver, signedWith } from "../support/receiver.js";
import { waitFor } from "../support/redis-servers.js";

/** The events of one batch's POST, as the receiver parses them. */
const eventsOf = (r: Received) =>
  JSON.parse(r.body) as { idempotency_key: string; payload: { seq: number } }[];

/**
 * Batched configs, over NATS (published at full speed) and POST /events: the `batch` field
 * checked and stored; events arrive as signed JSON arrays, each once; a failing batch is
 * retried whole and each event's attempt rows tell it; a replay goes alone.
 */
describe("batched delivery", function () {
  this.timeout(180_000);
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

  const config = (over: Record<string, unknown>) => ({
    endpoint: receiver.url,
    eventTypes: ["ledger.batched"],
    ...over,
  });
  const refused = async (method: string, path: string, body: unknown, field: string) => {
    const r = await env.api.call(method, path, body);
    expect(r.status, r.text).to.equal(400);
    expect(r.body.errorMessage).to.include(field);
  };

  it("refuses a bad batch field with a 400 naming it, and stores nothing", async () => {
    const before = (await env.api.call("GET", "/configs")).body.cursor.data.length;
    for (const [batch, field] of [
      [{ maxEvents: 1, maxWaitMs: 200 }, "batch.maxEvents"],
      [{ maxEvents: 201, maxWaitMs: 200 }, "batch.maxEvents"],
      [{ maxEvents: 2.5, maxWaitMs: 200 }, "batch.maxEvents"],
      [{ maxEvents: "50", maxWaitMs: 200 }, "batch.maxEvents"],
      [{ maxEvents: 50, maxWaitMs: 0 }, "batch.maxWaitMs"],
      [{ maxEvents: 50, maxWaitMs: 60_001 }, "batch.maxWaitMs"],
      [{ maxEvents: 50 }, "maxWaitMs"],
      [{ maxEvents: 50, maxWaitMs: 200, size: 3 }, "size"],
      [true, "batch"],
      [[50, 200], "batch"],
    ] as const) {
      await refused("POST", "/configs", config({ batch }), field);
    }
    expect((await env.api.call("GET", "/configs")).body.cursor.data).to.have.length(before);
  });

  it("stores the batch field, shows it only when set, beside ordering too", async () => {
    const plain = await env.createConfig(config({}));
    const shown = await env.api.call("GET", `/configs/${plain.id}`);
    expect(shown.body.data).to.not.have.property("batch");

    const batch = { maxEvents: 50, maxWaitMs: 200 };
    const c = await env.createConfig(config({ batch }));
    expect((await env.api.call("GET", `/configs/${c.id}`)).body.data.batch).to.deep.equal(batch);
    const listed = (await env.api.call("GET", `/configs?id=${c.id}`)).body.cursor.data[0];
    expect(listed.batch).to.deep.equal(batch);

    // Absent on update keeps it, also when ordering is turned on (an ordered config may batch).
    const kept = await env.api.call("PUT", `/configs/${c.id}`, config({}));
    expect(kept.body.data.batch).to.deep.equal(batch);
    const ordered = await env.api.call("PUT", `/configs/${c.id}`, config({ ordering: { enabled: true } }));
    expect(ordered.status, ordered.text).to.equal(200);
    expect(ordered.body.data.batch).to.deep.equal(batch);
    expect(ordered.body.data.ordering.enabled).to.equal(true);

    // null turns it off and keeps ordering; both in one create are stored as given.
    const off = await env.api.call("PUT", `/configs/${c.id}`, config({ batch: null }));
    expect(off.status, off.text).to.equal(200);
    expect(off.body.data).to.not.have.property("batch");
    expect(off.body.data.ordering.enabled).to.equal(true);
    const both = await env.createConfig(config({ batch, ordering: { enabled: true, onFailure: "block" } }));
    const read = (await env.api.call("GET", `/configs/${both.id}`)).body.data;
    expect(read.batch).to.deep.equal(batch);
    expect(read.ordering).to.deep.equal({ enabled: true, onFailure: "block" });
  });

  /** A batched config whose endpoint is its own path on the receiver, and the POSTs it got. */
  const batched = async (type: string, batch: { maxEvents: number; maxWaitMs: number }) => {
    const c = await env.createConfig({
      endpoint: `${receiver.url}/${type}`,
      eventTypes: [`ledger.${type}`],
      batch,
    });
    return { ...c, posts: () => receiver.requests.filter((r) => r.path === `/hook/${type}`) };
  };
  const event = (type: string, seq: number) =>
    env.event({ type: type.toUpperCase(), idempotency_key: `${type}-${seq}`, payload: { seq } });

  it("delivers 1 000 events published at full speed in at most 25 signed POSTs, each event once", async () => {
    const c = await batched("bulk", { maxEvents: 50, maxWaitMs: 200 });
    await Promise.all(Array.from({ length: 1000 }, (_, i) => env.publish(event("bulk", i))));
    const seen = () => c.posts().flatMap(eventsOf);
    await waitFor("1 000 events", async () => seen().length >= 1000, 120_000);
    const posts = c.posts();
    expect(posts.length).to.be.at.most(25);
    for (const p of posts) {
      expect(signedWith(c.secret, p), "batch signature").to.equal(true);
      const ids = String(p.headers[BATCH_IDS_HEADER]).split(",");
      expect(ids).to.have.length(eventsOf(p).length);
      expect(ids.length).to.be.at.most(50);
    }
    const seqs = seen().map((e) => e.payload.seq);
    expect(new Set(seqs).size).to.equal(1000);
    expect(seqs).to.have.length(1000);
    // Each event's own delivery: one attempt row per event, success, naming its batch.
    // Rows are written once each POST is answered.
    await waitFor("1 000 attempt rows", async () => (await env.attempts(c.id)).length >= 1000, 60_000);
    const rows = await env.attempts(c.id);
    expect(rows).to.have.length(1000);
    expect(rows.every((r) => r.status === "success")).to.equal(true);
    const ids = posts.flatMap((p) => String(p.headers[BATCH_IDS_HEADER]).split(","));
    expect(new Set(rows.map((r) => r.webhook_id))).to.deep.equal(new Set(ids));
  });

  it("flushes a partial batch after maxWaitMs, and retries a failing batch whole", async () => {
    const c = await batched("flaky", { maxEvents: 50, maxWaitMs: 300 });
    let failures = 2;
    answer = (_r, res) => {
      if (failures-- > 0) res.writeHead(500).end("down");
      else res.writeHead(200).end("ok");
    };
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await env.api.call("POST", "/events", event("flaky", i));
      expect(r.status, r.text).to.equal(202);
      ids.push(r.body.data.deliveries[0].webhookID);
    }
    // While the batch is retried, one of its events cannot be cancelled alone (it would take the batch with it).
    await waitFor("the first POST", async () => c.posts().length >= 1, 60_000);
    const cancel = await env.api.call("POST", `/webhooks/${ids[0]}/cancel`);
    expect(cancel.status, cancel.text).to.equal(409);
    expect(cancel.body.errorMessage).to.include("delivered in a batch with other events");
    await waitFor("the third POST", async () => c.posts().length >= 3, 60_000);
    const posts = c.posts();
    // Three events, fewer than maxEvents: one partial batch, sent three times (500, 500, 200).
    const rowsWritten = async () =>
      (await env.attempts(c.id)).filter((r) => r.retry_attempt === 2).length === ids.length;
    await waitFor("the success rows", rowsWritten, 60_000);
    expect(c.posts()).to.have.length(3);
    for (const p of posts) {
      expect(eventsOf(p).map((e) => e.payload.seq)).to.deep.equal([0, 1, 2]);
      expect(p.headers["svc-webhook-id"]).to.equal(posts[0]!.headers["svc-webhook-id"]);
      expect(String(p.headers[BATCH_IDS_HEADER]).split(",")).to.deep.equal(ids);
    }
    // Each event's attempts tell the batch's story: 500, 500, 200, under the same batch id.
    for (const id of ids) {
      const r = await env.api.call("GET", `/webhooks/${id}`);
      expect(r.status, r.text).to.equal(200);
      const attempts = r.body.data.attempts as { statusCode: number; status: string; batchID: string }[];
      expect(attempts.map((a) => a.statusCode).sort()).to.deep.equal([200, 500, 500]);
      expect(new Set(attempts.map((a) => a.batchID))).to.deep.equal(
        new Set([posts[0]!.headers["svc-webhook-id"]]),
      );
      expect(attempts.find((a) => a.statusCode === 200)!.status).to.equal("success");
    }
    answer = (_r, res) => res.writeHead(200).end("ok");
  });

  it("sends a replayed event alone, as a single delivery", async () => {
    const c = await batched("replayed", { maxEvents: 10, maxWaitMs: 100 });
    const r = await env.api.call("POST", "/events", event("replayed", 7));
    const id = r.body.data.deliveries[0].webhookID as string;
    await waitFor("the batch", async () => c.posts().length >= 1, 60_000);
    const replay = await env.api.call("POST", `/webhooks/${id}/replay`, undefined, {
      "Idempotency-Key": "replay-alone",
    });
    expect(replay.status, replay.text).to.be.oneOf([200, 202]);
    await waitFor("the replay", async () => c.posts().length >= 2, 60_000);
    const alone = c.posts()[1]!;
    expect(alone.headers).to.not.have.property(BATCH_IDS_HEADER);
    expect(signedWith(c.secret, alone)).to.equal(true);
    expect((JSON.parse(alone.body) as { payload: { seq: number } }).payload.seq).to.equal(7);
  });

  it("closes collected events without a send when the config is deactivated", async () => {
    const c = await batched("stopped", { maxEvents: 50, maxWaitMs: 60_000 });
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const r = await env.api.call("POST", "/events", event("stopped", i));
      expect(r.status, r.text).to.equal(202);
      ids.push(r.body.data.deliveries[0].webhookID);
    }
    // A collected event cannot be cancelled on its own either; deactivation closes them all.
    const cancel = await env.api.call("POST", `/webhooks/${ids[1]}/cancel`);
    expect(cancel.status, cancel.text).to.equal(409);
    expect(cancel.body.errorMessage).to.include("delivered in a batch with other events");
    const off = await env.api.call("PUT", `/configs/${c.id}/deactivate`);
    expect(off.status, off.text).to.equal(200);
    for (const id of ids) {
      await waitFor(`webhook ${id} closed`, async () => {
        const r = await env.api.call("GET", `/webhooks/${id}`);
        return r.body.data?.status === "failed";
      });
      const r = await env.api.call("GET", `/webhooks/${id}`);
      expect(r.body.data.reason).to.include("config deactivated");
    }
    expect(c.posts()).to.have.length(0);
  });
});
