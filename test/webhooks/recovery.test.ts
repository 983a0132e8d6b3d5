import { expect } from "chai";
import { DeliveryEnv } from "../support/delivery-env.js";
import { Receiver } from "../support/receiver.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const keyOf = (body: string) => (JSON.parse(body) as { idempotency_key: string }).idempotency_key;

/** POST /configs/{id}/recover: bulk replay of failed deliveries, against the real stack. */
describe("bulk recovery (POST /configs/{id}/recover)", function () {
  this.timeout(240_000);
  const env = new DeliveryEnv();
  let receiver: Receiver;
  /** Idempotency keys the receiver refuses with 400 (failed at once) or 503 (retried). */
  const refuse = new Map<string, number>();

  before(async () => {
    await env.start(["--recovery-rate", "20"]);
    receiver = await new Receiver().start();
    receiver.respond = (req, res) => {
      const status = refuse.get(keyOf(req.body)) ?? 200;
      res.writeHead(status).end(status === 200 ? "ok" : "no");
    };
  });
  after(async () => {
    await receiver?.stop();
    await env.stop();
  });

  const ingest = async (type: string, key: string, status = 400) => {
    refuse.set(key, status);
    const r = await env.api.call("POST", "/events", env.event({ app: "rec", type, idempotency_key: key }));
    if (r.status !== 202) throw new Error(`ingest: ${r.text}`);
    return r.body.data.deliveries as { configID: string; webhookID: string }[];
  };
  const recover = (configId: string, key: string | undefined, body: unknown) =>
    env.api.call("POST", `/configs/${configId}/recover`, body, key ? { "idempotency-key": key } : {});
  const received = (key: string) => receiver.requests.filter((r) => keyOf(r.body) === key);
  const until = async (what: string, fn: () => Promise<boolean>, ms = 60_000) => {
    const deadline = Date.now() + ms;
    while (!(await fn())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await sleep(200);
    }
  };
  const failedRows = async (configId: string) =>
    (await env.attempts(configId)).filter((a) => a.status === "failed").length;
  const finished = async (configId: string, id: string) => {
    let last: { state: string } = { state: "running" };
    await until(`recovery ${id} to finish`, async () => {
      last = (await env.api.call("GET", `/configs/${configId}/recoveries/${id}`)).body.data;
      return last.state !== "running";
    });
    return last as Record<string, unknown>;
  };

  it("replays the window's failed deliveries once per key, filtered by event type, with progress and metrics", async () => {
    const config = await env.createConfig({ endpoint: receiver.url, eventTypes: ["rec.a", "rec.b"] });
    const since = new Date(Date.now() - 1000).toISOString();
    const run = Date.now().toString(36);
    const a = Array.from({ length: 12 }, (_, i) => `a-${run}-${i}`);
    const b = Array.from({ length: 3 }, (_, i) => `b-${run}-${i}`);
    for (const key of a) await ingest("a", key);
    for (const key of b) await ingest("b", key);
    const fine = `ok-${run}`;
    await ingest("a", fine, 200);
    // Cancelled by an operator: never recovered.
    const [cancelled] = await ingest("a", `cancel-${run}`, 503);
    await until("the retried delivery to wait", async () =>
      (await env.attempts(config.id)).some(
        (r) => r.webhook_id === cancelled!.webhookID && r.status === "to retry",
      ),
    );
    expect((await env.api.call("POST", `/webhooks/${cancelled!.webhookID}/cancel`)).status).to.equal(202);
    await until("15 failed and 1 cancelled delivery", async () => (await failedRows(config.id)) >= 16);
    await until("the successful delivery", async () => received(fine).length === 1);
    const beforeRecovery = new Date().toISOString();
    refuse.clear();

    const first = await recover(config.id, "k1", { since, eventTypes: ["REC.A"] });
    expect(first.status, first.text).to.equal(202);
    expect(first.body.data).to.include({ configID: config.id, state: "running", since });
    expect(first.body.data.eventTypes).to.deep.equal(["rec.a"]);
    const done = await finished(config.id, first.body.data.id);
    expect(done).to.include({ state: "done", matched: 12, started: 12, alreadyStarted: 0, failedToStart: 0 });
    for (const key of a) await until(`the replay of ${key}`, async () => received(key).length === 2);
    for (const key of b) expect(received(key), key).to.have.length(1);
    expect(received(fine)).to.have.length(1);
    expect(received(`cancel-${run}`)).to.have.length(1);
    const replays = (await env.attempts(config.id)).filter((r) => r.status === "success");
    expect(replays).to.have.length(13);

    // The same key: the same recovery, nothing started; another window with it: refused.
    const again = await recover(config.id, "k1", { since, eventTypes: ["rec.a"] });
    expect(again.status, again.text).to.equal(200);
    expect(again.body.data.id).to.equal(first.body.data.id);
    const conflict = await recover(config.id, "k1", { since: beforeRecovery });
    expect(conflict.status, conflict.text).to.equal(409);
    expect(conflict.body.errorMessage).to.include("another window");
    // Another key over the same window: every one of them was recovered already.
    const second = await recover(config.id, "k2", { since, eventTypes: ["rec.a"] });
    expect(await finished(config.id, second.body.data.id)).to.include({
      state: "done",
      matched: 0,
      started: 0,
    });
    // The other type, up to a time before the recovery.
    const third = await recover(config.id, "k3", { since, until: beforeRecovery });
    expect(await finished(config.id, third.body.data.id)).to.include({ matched: 3, started: 3 });
    for (const key of b) await until(`the replay of ${key}`, async () => received(key).length === 2);
    await sleep(500);
    for (const key of a) expect(received(key), key).to.have.length(2);

    const list = await env.api.call("GET", `/configs/${config.id}/recoveries`);
    expect(list.body.data.map((r: { id: string }) => r.id)).to.deep.equal([
      third.body.data.id,
      second.body.data.id,
      first.body.data.id,
    ]);
    const metrics = await (await fetch(`${env.api.url}/metrics`)).text();
    expect(metrics).to.match(
      /webhooks_recovery_deliveries_total\{outcome="started"\} (1[5-9]|[2-9]\d|\d{3,})/,
    );
    expect(metrics).to.match(/webhooks_recoveries_finished_total\{state="done"\} [3-9]/);
  });

  it("refuses bad requests, naming what is wrong", async () => {
    const config = await env.createConfig({ endpoint: receiver.url, eventTypes: ["rec.c"] });
    const since = new Date().toISOString();
    for (const [key, body, status, says] of [
      [undefined, { since }, 400, "Idempotency-Key header is required"],
      ["x", {}, 400, 'missing required field "since"'],
      ["x", { since: "yesterday" }, 400, "since must be an RFC 3339 time"],
      ["x", { since, until: since }, 400, "until must be later than since"],
      ["x", { since, foo: 1 }, 400, 'unknown field "foo"'],
      ["x", { since, eventTypes: ["rec.*"] }, 400, "eventTypes[0] must be an event type"],
      ["x", { since, eventTypes: "rec.c" }, 400, "eventTypes must be of type array"],
    ] as const) {
      const r = await recover(config.id, key, body);
      expect(r.status, r.text).to.equal(status);
      expect(r.body.errorMessage, r.text).to.include(says);
    }
    const unknown = "00000000-0000-4000-8000-000000000000";
    expect((await recover(unknown, "x", { since })).status).to.equal(404);
    expect((await recover("not-a-uuid", "x", { since })).status).to.equal(404);
    expect((await env.api.call("GET", `/configs/${config.id}/recoveries/${unknown}`)).status).to.equal(404);
    await env.api.call("PUT", `/configs/${config.id}/deactivate`);
    const inactive = await recover(config.id, "x", { since });
    expect(inactive.status, inactive.text).to.equal(409);
    expect(inactive.body.errorMessage).to.include("inactive");
  });

  it("paces a large recovery so that new deliveries keep flowing", async () => {
    const config = await env.createConfig({ endpoint: receiver.url, eventTypes: ["rec.bulk", "rec.fresh"] });
    const since = new Date(Date.now() - 1000).toISOString();
    const run = Date.now().toString(36);
    const n = 150;
    const keys = Array.from({ length: n }, (_, i) => `bulk-${run}-${i}`);
    for (let i = 0; i < n; i += 10) await Promise.all(keys.slice(i, i + 10).map((k) => ingest("bulk", k)));
    await until(`${n} failed deliveries`, async () => (await failedRows(config.id)) >= n, 120_000);
    refuse.clear();

    const started = await recover(config.id, "bulk", { since, eventTypes: ["rec.bulk"] });
    expect(started.status, started.text).to.equal(202);
    const id = started.body.data.id as string;
    // New events while it runs: each must reach the receiver promptly.
    const latencies: number[] = [];
    const progress: number[] = [];
    let state = "running";
    for (let i = 0; state === "running"; i++) {
      const key = `fresh-${run}-${i}`;
      const t0 = Date.now();
      await ingest("fresh", key, 200);
      await until(`fresh event ${i}`, async () => received(key).length === 1, 30_000);
      latencies.push(Date.now() - t0);
      const r = (await env.api.call("GET", `/configs/${config.id}/recoveries/${id}`)).body.data;
      state = r.state;
      progress.push(r.matched);
      await sleep(200);
    }
    const done = await finished(config.id, id);
    expect(done).to.include({ state: "done", matched: n, started: n });
    for (const key of keys) expect(received(key), key).to.have.length(2);
    // Progress was visible part way (pages of 100), and the recovery took its paced time.
    expect(
      progress.some((m) => m > 0 && m < n),
      JSON.stringify(progress),
    ).to.equal(true);
    const tookMs = Date.parse(String(done.finishedAt)) - Date.parse(String(done.createdAt));
    expect(tookMs, "at most 20 replays a second").to.be.at.least(((n - 1) / 20) * 1000);
    expect(latencies.length).to.be.at.least(10);
    const sorted = [...latencies].sort((x, y) => x - y);
    console.log(
      `      ${n} replays at --recovery-rate 20 beside ${latencies.length} new events: new-event latency median ${sorted[sorted.length >> 1]} ms, max ${sorted.at(-1)} ms`,
    );
    expect(sorted.at(-1)).to.be.below(3000);
  });
});
