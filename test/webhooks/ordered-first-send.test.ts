import type { ServerResponse } from "node:http";
import { WorkflowNotFoundError } from "@temporalio/client";
import { expect } from "chai";
import type { AttemptSummary, DeliveryInput } from "../../activities/delivery-types.js";
import { DeliveryEnv } from "../support/delivery-env.js";
import { eventually } from "../support/poison.js";
import { type RateLimitUnderTest, startRateLimitService } from "../support/ratelimit-service.js";
import { type Received, Receiver } from "../support/receiver.js";

const seqOf = (r: Received) => (JSON.parse(r.body) as { payload: { seq: number } }).payload.seq;

/** Polls `ok` until it holds (a minute at most). */
const until = (what: string, ok: () => boolean | Promise<boolean>) =>
  eventually(what, async () => ok(), 60_000);

/** Posts events 1..count of key k to a new ordered config; their webhook and workflow ids. */
async function postOrdered(env: DeliveryEnv, endpoint: string, type: string, count: number) {
  await env.createConfig({ endpoint, eventTypes: [`ledger.${type}`], ordering: { enabled: true } });
  const posted: { webhookId: string; workflowId: string }[] = [];
  for (let seq = 1; seq <= count; seq++) {
    const r = await env.api.call(
      "POST",
      "/events",
      env.event({ type, idempotency_key: `${type}-${seq}`, ordering_key: "k", payload: { seq } }),
    );
    expect(r.status, r.text).to.equal(202);
    const d = r.body.data.deliveries[0];
    posted.push({ webhookId: d.webhookID, workflowId: d.workflowID });
  }
  return posted;
}

/** The input a delivery workflow was started with (its first history event). */
async function startInput(env: DeliveryEnv, workflowId: string): Promise<DeliveryInput> {
  const history = await env.temporal.workflow.getHandle(workflowId).fetchHistory();
  const data = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0]?.data;
  return JSON.parse(Buffer.from(data!).toString()) as DeliveryInput;
}

/**
 * The first send made by an ordered key's workflow itself (workflows/ordered-delivery.ts,
 * patch ordered-first-send-here): an event it ends costs no delivery workflow; one that goes
 * on continues in its delivery workflow from that attempt, and the key waits for it.
 */
describe("ordered delivery: the key's workflow sends each first attempt", function () {
  this.timeout(180_000);
  const env = new DeliveryEnv();
  let receiver: Receiver;
  /** Per test: how the receiver answers the POST of event `seq` (its `n`th). */
  let answer: (seq: number, n: number, res: ServerResponse) => void;

  before(async () => {
    await env.start(["--max-attempts", "5", "--local-send-budget", "300ms"]);
    receiver = await new Receiver().start();
    receiver.respond = (r, res) => {
      const seq = seqOf(r);
      answer(seq, receiver.requests.filter((q) => seqOf(q) === seq).length, res);
    };
  });
  beforeEach(() => receiver.requests.splice(0));
  after(async () => {
    await receiver?.stop();
    await env.stop();
  });

  const postEvents = (type: string, count: number) => postOrdered(env, receiver.url, type, count);
  const webhook = async (id: string) => (await env.api.call("GET", `/webhooks/${id}`)).body.data;
  const ended = (id: string) => async () => ["success", "failed"].includes((await webhook(id))?.status);
  const workflowExists = async (workflowId: string) =>
    env.temporal.workflow
      .getHandle(workflowId)
      .describe()
      .then(
        () => true,
        (err: unknown) => {
          if (err instanceof WorkflowNotFoundError) return false;
          throw err;
        },
      );

  it("an event whose first send succeeds has one attempt row naming its own workflow, and no delivery workflow", async () => {
    answer = (_seq, _n, res) => res.writeHead(200).end("ok");
    const events = await postEvents("fast_ok", 3);
    for (const e of events) await until(`webhook ${e.webhookId}`, ended(e.webhookId));
    expect(receiver.requests.map(seqOf)).to.deep.equal([1, 2, 3]);
    for (const e of events) {
      const w = await webhook(e.webhookId);
      expect(w.status).to.equal("success");
      expect(w.attempts.map((a: { retryAttempt: number }) => a.retryAttempt)).to.deep.equal([0]);
      // The delivery's own id (cancel, reconciliation and the Web UI look it up), not the key's.
      expect(w.workflowID).to.equal(e.workflowId);
      expect(await workflowExists(e.workflowId), e.workflowId).to.equal(false);
    }
  });

  it("a first send that fails continues in its delivery workflow: attempt numbers go on, no second immediate POST", async () => {
    answer = (seq, n, res) => res.writeHead(seq === 1 && n <= 2 ? 503 : 200, { "retry-after": "1" }).end();
    const [head, next] = await postEvents("fast_retried", 2);
    await until(
      "both delivered",
      async () => (await ended(head!.webhookId)()) && (await ended(next!.webhookId)()),
    );
    // One POST per attempt row: the first (the key's), then the retries (its delivery workflow's).
    expect(receiver.requests.map(seqOf)).to.deep.equal([1, 1, 1, 2]);
    const w = await webhook(head!.webhookId);
    expect(
      w.attempts.map((a: { retryAttempt: number; statusCode: number }) => [a.retryAttempt, a.statusCode]),
    ).to.deep.equal([
      [0, 503],
      [1, 503],
      [2, 200],
    ]);
    expect(w.workflowID).to.equal(head!.workflowId);
    const handle = env.temporal.workflow.getHandle(head!.workflowId);
    const input = (await handle.describe()).raw.workflowExecutionInfo;
    expect(input?.status).to.equal(2); // COMPLETED
    const attempts = await handle.query<AttemptSummary[]>("attempts");
    expect(attempts.map((a) => a.retryAttempt)).to.deep.equal([0, 1, 2]);
    expect((await startInput(env, head!.workflowId)).firstSend).to.have.nested.property(
      "attempt.retryAttempt",
      0,
    );
  });

  it("a cancel while the head waits for its retry cancels the delivery, not the key", async () => {
    answer = (seq, n, res) => res.writeHead(seq === 1 && n === 1 ? 503 : 200, { "retry-after": "60" }).end();
    const [head, next] = await postEvents("fast_cancelled", 2);
    await until("the head's delivery workflow", () => workflowExists(head!.workflowId));
    const cancel = await env.api.call("POST", `/webhooks/${head!.webhookId}/cancel`);
    expect(cancel.status, cancel.text).to.equal(202);
    expect(cancel.body.data.workflowID).to.equal(head!.workflowId);
    await until("the next event", ended(next!.webhookId));
    expect((await webhook(head!.webhookId)).reason).to.include("cancelled");
    expect(receiver.requests.map(seqOf)).to.deep.equal([1, 2]);
  });

  it("a receiver slower than the budget still holds the key's next event until it ends, with one POST", async () => {
    let headAnswered = false;
    let nextSentEarly = false;
    answer = (seq, _n, res) => {
      if (seq === 2 && !headAnswered) nextSentEarly = true;
      if (seq !== 1) return void res.writeHead(200).end();
      setTimeout(() => {
        headAnswered = true;
        res.writeHead(200).end();
      }, 1500);
    };
    const [head, next] = await postEvents("fast_slow", 2);
    await until(
      "both delivered",
      async () => (await ended(head!.webhookId)()) && (await ended(next!.webhookId)()),
    );
    expect(nextSentEarly, "event 2 was POSTed while event 1's POST was out").to.equal(false);
    expect(receiver.requests.map(seqOf)).to.deep.equal([1, 2]);
    const w = await webhook(head!.webhookId);
    expect(
      w.attempts.map((a: { retryAttempt: number; status: string }) => [a.retryAttempt, a.status]),
    ).to.deep.equal([[0, "success"]]);
    // Handed over past its budget: its delivery workflow found the detached POST's row.
    const handle = env.temporal.workflow.getHandle(head!.workflowId);
    expect(await handle.result()).to.include({ status: "success", attempts: 1 });
  });
});

/** The rate limit service's wait, told to the key's first send, goes on in the delivery workflow. */
describe("ordered delivery: a first send the rate limit service holds back", function () {
  this.timeout(120_000);
  const env = new DeliveryEnv();
  let ratelimit: RateLimitUnderTest;
  let receiver: Receiver;

  before(async () => {
    ratelimit = await startRateLimitService(`domain: webhooks
descriptors:
  - key: config_id
    rate_limit: { unit: second, requests_per_unit: 1 }
`);
    receiver = await new Receiver().start();
    await env.start(["--ratelimit-addr", ratelimit.grpcAddress]);
  });
  after(async () => {
    await env.stop();
    await receiver?.stop();
    await ratelimit?.stop();
  });

  it("waits in the delivery workflow, then sends attempt 0 once, in order", async () => {
    const events = await postOrdered(env, receiver.url, "fast_limited", 3);
    await until("all delivered", () => receiver.requests.length >= 3);
    const config = (await env.api.call("GET", `/webhooks/${events[0]!.webhookId}`)).body.data.configID;
    await until("their rows", async () => (await env.attempts(config)).length === 3);
    expect(receiver.requests.map(seqOf)).to.deep.equal([1, 2, 3]);
    const seconds = receiver.requests.map((r) => Math.floor(r.at / 1000));
    expect(new Set(seconds).size, `receipts in seconds ${seconds}`).to.equal(3);
    expect((await env.attempts(config)).map((r) => [r.retry_attempt, r.status])).to.deep.equal([
      [0, "success"],
      [0, "success"],
      [0, "success"],
    ]);
    // The second came right after the first, within its second: the key's send was told to wait.
    expect((await startInput(env, events[1]!.workflowId)).firstSend).to.have.property("waitMs");
  });
});
