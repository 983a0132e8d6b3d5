// tags: @temporal-server (also run on the production Temporal server: npm run test:temporal-server)
import type { ServerResponse } from "node:http";
import { expect } from "chai";
import { DeliveryEnv } from "../support/delivery-env.js";
import { type Received, Receiver } from "../support/receiver.js";
import { until } from "../support/until.js";

/** What the receiver reads of an ordered test event. */
const eventOf = (r: Received): { key: string; seq: number } => {
  const body = JSON.parse(r.body) as { ordering_key?: string; payload: { key: string; seq: number } };
  return body.payload;
};

/**
 * Ordered configs over POST /events (accepted one after the other, so the accepted order
 * is the posting order): one key's events go one at a time; a failing head holds only its
 * key; `block` holds it until skip; deactivation and cancel keep their meaning.
 */
describe("ordered delivery per ordering key", function () {
  this.timeout(180_000);
  const env = new DeliveryEnv();
  let receiver: Receiver;
  /** Per test: how the receiver answers one event's POST. */
  let answer: (e: { key: string; seq: number }, res: ServerResponse, r: Received) => void;

  before(async () => {
    await env.start(["--max-attempts", "5"]);
    receiver = await new Receiver().start();
    receiver.respond = (r, res) => answer(eventOf(r), res, r);
  });
  after(async () => {
    await receiver?.stop();
    await env.stop();
  });

  const post = async (type: string, key: string, seq: number) => {
    const r = await env.api.call(
      "POST",
      "/events",
      env.event({
        type,
        idempotency_key: `${type}-${key}-${seq}`,
        ordering_key: key,
        payload: { key, seq },
      }),
    );
    expect(r.status, r.text).to.equal(202);
    return r.body.data.deliveries[0].webhookID as string;
  };
  const ordered = (type: string, onFailure?: "skip" | "block") =>
    env.createConfig({
      endpoint: receiver.url,
      eventTypes: [`ledger.${type}`],
      ordering: { enabled: true, ...(onFailure ? { onFailure } : {}) },
    });
  /** The POSTs the receiver got for a key, in arrival order, with how each was answered. */
  const seen = (key: string) => receiver.requests.filter((r) => eventOf(r).key === key);
  const succeeded = new Set<Received>();
  const ok = (res: ServerResponse, r: Received) => {
    succeeded.add(r);
    res.writeHead(200).end("ok");
  };
  const successes = (key: string) =>
    seen(key)
      .filter((r) => succeeded.has(r))
      .map((r) => eventOf(r).seq);
  const keys = async (configId: string, state?: string) => {
    const r = await env.api.call(
      "GET",
      `/configs/${configId}/ordering-keys${state ? `?state=${state}` : ""}`,
    );
    expect(r.status, r.text).to.equal(200);
    return r.body.cursor.data as {
      orderingKey: string;
      state: string;
      queued: number;
      headWebhookID?: string;
    }[];
  };

  it("validates the ordering field and shows it in the config answers", async () => {
    const bad = await env.api.call("POST", "/configs", {
      endpoint: receiver.url,
      eventTypes: ["ledger.x"],
      ordering: { enabled: true, onFailure: "retry" },
    });
    expect(bad.status).to.equal(400);
    expect(bad.body.errorMessage).to.include("ordering.onFailure");
    const notObject = await env.api.call("POST", "/configs", {
      endpoint: receiver.url,
      eventTypes: ["ledger.x"],
      ordering: true,
    });
    expect(notObject.status).to.equal(400);
    expect(notObject.body.errorMessage).to.include("ordering");

    const c = await ordered("shown");
    const got = await env.api.call("GET", `/configs/${c.id}`);
    expect(got.body.data.ordering).to.deep.equal({ enabled: true, onFailure: "skip" });
    // Absent on update keeps it; null turns it off.
    const kept = await env.api.call("PUT", `/configs/${c.id}`, {
      endpoint: receiver.url,
      eventTypes: ["ledger.shown"],
    });
    expect(kept.body.data.ordering).to.deep.equal({ enabled: true, onFailure: "skip" });
    const off = await env.api.call("PUT", `/configs/${c.id}`, {
      endpoint: receiver.url,
      eventTypes: ["ledger.shown"],
      ordering: null,
    });
    expect(off.status, off.text).to.equal(200);
    expect(off.body.data).to.not.have.property("ordering");

    // The same event again starts nothing new (200, as for an unordered config).
    const reordered = await env.api.call("PUT", `/configs/${c.id}`, {
      endpoint: receiver.url,
      eventTypes: ["ledger.shown"],
      ordering: { enabled: true },
    });
    expect(reordered.status).to.equal(200);
    answer = (_e, res, r) => ok(res, r);
    const event = env.event({ type: "shown", idempotency_key: "shown-once", ordering_key: "s" });
    const first = await env.api.call("POST", "/events", event);
    expect(first.status, first.text).to.equal(202);
    const again = await env.api.call("POST", "/events", event);
    expect(again.status, again.text).to.equal(200);
    expect(again.body.data.deliveries[0].started).to.equal(false);

    const badKey = await env.api.call("POST", "/events", env.event({ ordering_key: "k".repeat(257) }));
    expect(badKey.status).to.equal(400);
    expect(badKey.body.errorMessage).to.include("ordering_key");
    const badState = await env.api.call("GET", `/configs/${c.id}/ordering-keys?state=stuck`);
    expect(badState.status).to.equal(400);
    expect(badState.body.errorMessage).to.include("state");
  });

  it("holds a key behind a head that fails 3 times, not the other keys", async () => {
    const c = await ordered("held");
    let headFailures = 0;
    let listed: { orderingKey: string; state: string; queued: number }[] = [];
    answer = (e, res, r) => {
      if (e.key === "a" && e.seq === 1) {
        if (headFailures < 3) {
          headFailures++;
          res.writeHead(503).end();
          return;
        }
        // Its 4th attempt answers only once every event of key b arrived: key b was not held.
        void until("key b", () => successes("b").length === 5)
          .then(async () => {
            listed = await keys(c.id);
          })
          .then(() => ok(res, r));
        return;
      }
      ok(res, r);
    };
    for (let seq = 1; seq <= 5; seq++) await post("held", "a", seq);
    for (let seq = 1; seq <= 5; seq++) await post("held", "b", seq);
    await until("both keys", () => successes("a").length === 5 && successes("b").length === 5);
    expect(successes("a")).to.deep.equal([1, 2, 3, 4, 5]);
    expect(successes("b")).to.deep.equal([1, 2, 3, 4, 5]);
    // Nothing of key a after its head was sent before the head succeeded.
    expect(seen("a").map((r) => eventOf(r).seq)).to.deep.equal([1, 1, 1, 1, 2, 3, 4, 5]);
    expect(headFailures).to.equal(3);
    // While key a's head retried, its whole backlog waited; key b, drained, was idle (not listed).
    expect(listed.map((k) => [k.orderingKey, k.state, k.queued])).to.deep.equal([["a", "active", 5]]);
    await until("both keys idle", async () => (await keys(c.id)).length === 0);
  });

  it("with block, holds the key after a head failed for good until skip", async () => {
    const c = await ordered("blocked", "block");
    answer = (e, res, r) => (e.seq === 1 ? res.writeHead(400).end("no") : ok(res, r));
    const head = await post("blocked", "c", 1);
    await post("blocked", "c", 2);
    await post("blocked", "c", 3);
    await until("key c blocked", async () => (await keys(c.id, "blocked")).length === 1);
    const [blocked] = await keys(c.id, "blocked");
    expect(blocked).to.include({ orderingKey: "c", state: "blocked", headWebhookID: head });
    expect(seen("c").map((r) => eventOf(r).seq)).to.deep.equal([1]);
    const metrics = await (await fetch(`${env.api.url}/metrics`)).text();
    expect(metrics).to.match(/^webhooks_ordering_keys_blocked 1$/m);
    // The Web UI shows what holds it: the key's workflow's current details.
    const meta = await env.temporal.workflow
      .getHandle((blocked as unknown as { workflowId: string }).workflowId)
      .query<{ currentDetails: string }>("__temporal_workflow_metadata");
    expect(meta.currentDetails).to.include(`blocked by webhook ${head}`);

    const notBlocked = await env.api.call("POST", `/configs/${c.id}/ordering-keys/zzz/skip`);
    expect(notBlocked.status).to.equal(404);
    const skip = await env.api.call("POST", `/configs/${c.id}/ordering-keys/c/skip`);
    expect(skip.status, skip.text).to.equal(202);
    await until("key c drained", () => successes("c").length === 2);
    expect(seen("c").map((r) => eventOf(r).seq)).to.deep.equal([1, 2, 3]);
    expect(await keys(c.id, "blocked")).to.deep.equal([]);
  });

  it("with block, a replay of the failed head goes first and releases the key", async () => {
    const c = await ordered("replayed", "block");
    let headCalls = 0;
    answer = (e, res, r) => (e.seq === 1 && ++headCalls === 1 ? res.writeHead(400).end("no") : ok(res, r));
    const head = await post("replayed", "r", 1);
    await post("replayed", "r", 2);
    await until("key r blocked", async () => (await keys(c.id, "blocked")).length === 1);
    const replay = await env.api.call("POST", `/webhooks/${head}/replay`, undefined, {
      "idempotency-key": "again",
    });
    expect(replay.status, replay.text).to.equal(202);
    await until("key r drained", () => successes("r").length === 2);
    expect(seen("r").map((r) => eventOf(r).seq)).to.deep.equal([1, 1, 2]);
  });

  it("a bulk recovery replays a key's failed deliveries in the order they were accepted", async () => {
    const c = await ordered("recovered");
    let down = true;
    answer = (_e, res, r) => (down ? res.writeHead(400).end("no") : ok(res, r));
    const since = new Date(Date.now() - 1000).toISOString();
    for (let seq = 1; seq <= 8; seq++) await post("recovered", "h", seq);
    await until("every first send failed", () => seen("h").length === 8);
    down = false;
    const recovery = await env.api.call(
      "POST",
      `/configs/${c.id}/recover`,
      { since },
      { "idempotency-key": "ordered" },
    );
    expect(recovery.status, recovery.text).to.equal(202);
    await until("the replays", () => successes("h").length === 8);
    expect(successes("h")).to.deep.equal([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it("with skip (the default), goes on after the head's last attempt", async () => {
    await ordered("skipped");
    answer = (e, res, r) => (e.seq === 1 ? res.writeHead(400).end("no") : ok(res, r));
    for (let seq = 1; seq <= 3; seq++) await post("skipped", "d", seq);
    await until("key d", () => successes("d").length === 2);
    expect(seen("d").map((r) => eventOf(r).seq)).to.deep.equal([1, 2, 3]);
  });

  it("deactivation drains a blocked key without sending; cancelling a retrying head lets the next go", async () => {
    const blocking = await ordered("gone", "block");
    answer = (e, res, r) =>
      e.key === "e" || e.key === "g" || e.seq === 1
        ? res.writeHead(e.key === "f" ? 503 : 400).end()
        : ok(res, r);
    await post("gone", "e", 1);
    await post("gone", "e", 2);
    await until("key e blocked", async () => (await keys(blocking.id, "blocked")).length === 1);
    const off = await env.api.call("PUT", `/configs/${blocking.id}/deactivate`);
    expect(off.status, off.text).to.equal(200);
    await until("key e released", async () => (await keys(blocking.id, "blocked")).length === 0);

    // Deletion too: the deleted config's blocked key drains, its queued event never sent.
    const deleted = await ordered("deleted", "block");
    await post("deleted", "g", 1);
    await post("deleted", "g", 2);
    await until("deleted's key blocked", async () => (await keys(deleted.id, "blocked")).length === 1);
    const del = await env.api.call("DELETE", `/configs/${deleted.id}`);
    expect(del.status, del.text).to.equal(200);
    const state = () =>
      env.temporal.workflow
        .getHandle(`ordered:${deleted.id}:g`)
        .query<{ blocked?: unknown; head?: string }>("ordered-state");
    const queued = async () =>
      (
        await env.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM ordered_backlog WHERE config_id = $1",
          [deleted.id],
        )
      )[0]!.n;
    await until("deleted's key drained", async () => {
      const s = await state();
      return (await queued()) === 0 && s.blocked === undefined && s.head === undefined;
    });

    await ordered("cancelled");
    const head = await post("cancelled", "f", 1);
    await post("cancelled", "f", 2);
    await until("head retrying", () => seen("f").length >= 2);
    const cancel = await env.api.call("POST", `/webhooks/${head}/cancel`);
    expect(cancel.status, cancel.text).to.equal(202);
    await until("key f's next", () => successes("f").length === 1);
    expect(successes("f")).to.deep.equal([2]);
    // The deactivated and deleted configs' queued events were never sent.
    expect(seen("e").map((r) => eventOf(r).seq)).to.deep.equal([1]);
    expect(seen("g").map((r) => eventOf(r).seq)).to.deep.equal([1]);
  });
});
