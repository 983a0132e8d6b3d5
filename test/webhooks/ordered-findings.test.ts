// tags: @temporal-server (also run on the production Temporal server: npm run test:temporal-server)
import type { ServerResponse } from "node:http";
import { expect } from "chai";
import { orderedWorkflowId } from "../../core/ordering.js";
import { DeliveryEnv } from "../support/delivery-env.js";
import { type Received, Receiver } from "../support/receiver.js";
import { until } from "../support/until.js";

const eventOf = (r: Received): { key: string; seq: number } => {
  const body = JSON.parse(r.body) as
    | { payload: { key: string; seq: number } }
    | { payload: { key: string; seq: number } }[];
  return (Array.isArray(body) ? body[0]! : body).payload;
};

/**
 * What the key workflow that held its queue in its state got wrong, each a scenario against
 * the real stack (the key's sequencer, workflows/key-sequencer.ts, must get each right): a
 * late release, a repeat of a failed event, ordering turned off on a blocked key, a closing
 * that outlived its head, and reconciliation of keys whose sequencer an operator terminated.
 */
describe("ordered delivery: the key workflow's known faults", function () {
  this.timeout(180_000);
  const env = new DeliveryEnv();
  let receiver: Receiver;
  let answer: (e: { key: string; seq: number }, res: ServerResponse, r: Received) => void;

  before(async () => {
    await env.start([
      ...["--max-attempts", "3", "--min-backoff-delay", "200ms", "--max-backoff-delay", "200ms"],
      // One key per reconciliation round: the walk must still reach every key.
      ...["--retry-period", "300ms", "--reconcile-grace", "1s", "--retry-batch-size", "1"],
    ]);
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
      env.event({ type, idempotency_key: `${type}-${key}-${seq}`, ordering_key: key, payload: { key, seq } }),
    );
    expect(r.status, r.text).to.be.oneOf([200, 202]);
    return r.body.data.deliveries[0] as { webhookID: string; started: boolean };
  };
  const ordered = (type: string, extra: Record<string, unknown> = {}) =>
    env.createConfig({
      endpoint: receiver.url,
      eventTypes: [`ledger.${type}`],
      ordering: { enabled: true, onFailure: "block" },
      ...extra,
    });
  const seqs = (key: string) =>
    receiver.requests.filter((r) => eventOf(r).key === key).map((r) => eventOf(r).seq);
  const state = async (configId: string, key: string) => {
    const r = await env.api.call("GET", `/configs/${configId}/ordering-keys`);
    return (r.body.cursor.data as { orderingKey: string; state: string; headWebhookID?: string }[]).find(
      (k) => k.orderingKey === key,
    );
  };
  const ok = (res: ServerResponse) => res.writeHead(200).end("ok");

  it("a late release names the head it meant: it leaves the head that blocked since alone", async () => {
    const c = await ordered("late_skip");
    answer = (e, res) => (e.seq <= 2 ? res.writeHead(400).end() : ok(res));
    const first = await post("late_skip", "l", 1);
    await post("late_skip", "l", 2);
    await post("late_skip", "l", 3);
    await until("blocked by 1", async () => (await state(c.id, "l"))?.headWebhookID === first.webhookID);
    expect((await env.api.call("POST", `/configs/${c.id}/ordering-keys/l/skip`)).status).to.equal(202);
    await until("blocked by 2", async () => {
      const s = await state(c.id, "l");
      return s?.state === "blocked" && s.headWebhookID !== first.webhookID;
    });
    // The operator's second click, meant for event 1, arrives now.
    await env.temporal.workflow.getHandle(orderedWorkflowId(c.id, "l")).signal("skip-head", first.webhookID);
    await new Promise((r) => setTimeout(r, 1500));
    expect((await state(c.id, "l"))?.state).to.equal("blocked");
    expect(seqs("l")).to.deep.equal([1, 2]);
  });

  it("a repeat of an event that failed for good does not block its key again", async () => {
    const c = await ordered("repeat");
    answer = (e, res) => (e.seq === 1 ? res.writeHead(400).end() : ok(res));
    await post("repeat", "r", 1);
    await until("blocked", async () => (await state(c.id, "r"))?.state === "blocked");
    await env.api.call("POST", `/configs/${c.id}/ordering-keys/r/skip`);
    await post("repeat", "r", 2);
    await until("2 delivered", () => seqs("r").includes(2));
    // The producer publishes event 1 again: a repeat, not a new delivery.
    expect((await post("repeat", "r", 1)).started).to.equal(false);
    await post("repeat", "r", 3);
    await until("3 delivered", () => seqs("r").includes(3));
    expect(seqs("r")).to.deep.equal([1, 2, 3]);
    expect((await state(c.id, "r"))?.state).to.not.equal("blocked");
  });

  it("turning ordering off on a blocked key lets its backlog drain, in order", async () => {
    const c = await ordered("ordering_off");
    let failing = true;
    answer = (e, res) => (e.seq === 1 && failing ? res.writeHead(400).end() : ok(res));
    for (let seq = 1; seq <= 4; seq++) await post("ordering_off", "o", seq);
    await until("blocked", async () => (await state(c.id, "o"))?.state === "blocked");
    failing = false;
    const put = await env.api.call("PUT", `/configs/${c.id}`, {
      endpoint: receiver.url,
      eventTypes: ["ledger.ordering_off"],
      ordering: null,
    });
    expect(put.status, put.text).to.equal(200);
    await until("the backlog", () => seqs("o").length === 4);
    expect(seqs("o")).to.deep.equal([1, 2, 3, 4]);
  });

  it("after deactivate and activate, a batched key sends again and block still blocks", async () => {
    const c = await ordered("reactivated", { batch: { maxEvents: 2, maxWaitMs: 300 } });
    let failing = false;
    answer = (_e, res) => (failing ? res.writeHead(400).end() : ok(res));
    await post("reactivated", "a", 1);
    await until("1", () => seqs("a").length === 1);
    expect((await env.api.call("PUT", `/configs/${c.id}/deactivate`)).status).to.equal(200);
    expect((await env.api.call("PUT", `/configs/${c.id}/activate`)).status).to.equal(200);
    await post("reactivated", "a", 2);
    await until("2 sent", () => seqs("a").includes(2));
    failing = true;
    await post("reactivated", "a", 3);
    await until("blocked by 3", async () => (await state(c.id, "a"))?.state === "blocked");
    await post("reactivated", "a", 4);
    await new Promise((r) => setTimeout(r, 1000));
    expect(seqs("a").filter((s) => s === 4)).to.deep.equal([]);
  });

  it("reconciliation starts a sequencer for every key whose own was terminated, one key per round", async () => {
    const c = await ordered("terminated", { ordering: { enabled: true, onFailure: "skip" } });
    let up = false;
    answer = (_e, res) => (up ? ok(res) : res.writeHead(503).end());
    for (const key of ["t1", "t2", "t3"])
      for (let seq = 1; seq <= 3; seq++) await post("terminated", key, seq);
    await until("each head tried", () => ["t1", "t2", "t3"].every((k) => seqs(k).length >= 1));
    // An operator terminates the three sequencers (their heads' workflows go on).
    for (const key of ["t1", "t2", "t3"])
      await env.temporal.workflow.getHandle(orderedWorkflowId(c.id, key)).terminate("operator");
    up = true;
    await until(
      "every key's backlog",
      () => ["t1", "t2", "t3"].every((k) => new Set(seqs(k)).size === 3),
      90_000,
    );
    for (const key of ["t1", "t2", "t3"]) {
      const firsts = seqs(key).filter((s, i, all) => all.indexOf(s) === i);
      expect(firsts, key).to.deep.equal([1, 2, 3]);
    }
  });
});
