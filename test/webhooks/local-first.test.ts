import { historyToJSON } from "@temporalio/common/lib/proto-utils.js";
import { expect } from "chai";
import { DeliveryEnv } from "../support/delivery-env.js";
import { metric } from "../support/poison.js";
import { Receiver } from "../support/receiver.js";

interface HistoryEvent {
  eventType: string;
  markerRecordedEventAttributes?: { details?: { result?: { payloads?: { data: string }[] } } };
  activityTaskScheduledEventAttributes?: { activityType?: { name: string } };
  workflowExecutionSignaledEventAttributes?: { signalName: string };
}

/** A delivery's history, with what the tests look at decoded. */
async function historyOf(env: DeliveryEnv, workflowId: string) {
  const history = await env.temporal.workflow.getHandle(workflowId).fetchHistory();
  const events = (JSON.parse(historyToJSON(history)) as { events: HistoryEvent[] }).events;
  const types = events.map((e) => e.eventType);
  return {
    /** What each local activity returned. */
    localResults: events
      .map((e) => e.markerRecordedEventAttributes?.details?.result?.payloads?.[0]?.data)
      .filter((d): d is string => d !== undefined)
      .map((d) => JSON.parse(Buffer.from(d, "base64").toString("utf8"))),
    /** Activities scheduled on the sends queue. */
    queueSends: events.filter(
      (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === "sendAttempt",
    ).length,
    signals: events.map((e) => e.workflowExecutionSignaledEventAttributes?.signalName).filter(Boolean),
    workflowTaskTimeouts: types.filter((t) => t.includes("WORKFLOW_TASK_TIMED_OUT")).length,
  };
}

/**
 * The default send mode, local-first (activities/local-first.ts): a fast receiver is sent
 * to from the workflow worker; one without an answer within --local-send-budget keeps its
 * POST (sent once) while the delivery moves to the sends queue; retries go to the queue.
 */
describe("--send-mode local-first (the default)", function () {
  this.timeout(180_000);
  const env = new DeliveryEnv();
  const receiver = new Receiver();

  before(async () => {
    await receiver.start();
    await env.start(["--local-send-budget", "1s", "--send-timeout", "10s"]);
  });
  after(async () => {
    await receiver.stop();
    await env.stop();
  });

  /** A config whose receiver answers as `respond` does, and what reached it. */
  const endpoint = async (respond: (n: number, res: import("node:http").ServerResponse) => void) => {
    const type = `lf_${Math.random().toString(36).slice(2)}`;
    const path = `/hook-${type}`;
    let n = 0;
    const previous = receiver.respond;
    receiver.respond = (req, res) => (req.path === path ? respond(++n, res) : previous(req, res));
    const config = await env.createConfig({
      endpoint: receiver.url.replace("/hook", path),
      eventTypes: [`ledger.${type}`],
    });
    const send = async () => {
      const event = env.event({ type });
      await env.publish(event);
      return { event, workflowId: env.workflowId(config.id, event.idempotency_key) };
    };
    return { config, send, requests: () => receiver.requests.filter((r) => r.path === path) };
  };

  it("sends to a fast receiver from the workflow worker: no activity task", async () => {
    const fast = await endpoint((_n, res) => res.writeHead(204).end());
    const { event, workflowId } = await fast.send();
    expect(await env.result(fast.config.id, event.idempotency_key)).to.include({
      status: "success",
      attempts: 1,
    });
    const h = await historyOf(env, workflowId);
    expect(h.queueSends).to.equal(0);
    expect(h.localResults).to.have.length(1);
    expect(h.localResults[0].attempt).to.include({ status: "success", statusCode: 204 });
    expect(fast.requests()).to.have.length(1);
  });

  it("hands a receiver slower than the budget to the sends queue without POSTing twice, and sends its next deliveries there", async () => {
    const slow = await endpoint((_n, res) => setTimeout(() => res.writeHead(200).end(), 2500));
    const first = await slow.send();
    expect(await env.result(slow.config.id, first.event.idempotency_key)).to.include({
      status: "success",
      attempts: 1,
    });
    const h = await historyOf(env, first.workflowId);
    expect(h.localResults).to.deep.equal([{ handedOver: "no answer within 1000 ms", detached: true }]);
    // The detached POST told the workflow; the queue's send found its row.
    expect(h.signals).to.deep.equal(["first-send-settled"]);
    expect(h.queueSends).to.equal(1);
    expect(slow.requests()).to.have.length(1);

    // The config cools down: its next first send goes to the queue without waiting here.
    const next = await slow.send();
    expect(await env.result(slow.config.id, next.event.idempotency_key)).to.include({ status: "success" });
    const h2 = await historyOf(env, next.workflowId);
    expect(h2.localResults).to.have.length(1);
    expect(h2.localResults[0]).to.include({ detached: false });
    expect(h2.localResults[0].handedOver).to.match(
      /^config cooling down: a first send had no answer within 1000 ms$/,
    );
    expect(h2.signals).to.deep.equal([]);
    expect(h2.queueSends).to.equal(1);
    expect(slow.requests()).to.have.length(2);
  });

  it("retries a failed first send on the sends queue", async () => {
    const flaky = await endpoint((n, res) => res.writeHead(n === 1 ? 503 : 200).end());
    const { event, workflowId } = await flaky.send();
    expect(await env.result(flaky.config.id, event.idempotency_key)).to.include({
      status: "success",
      attempts: 2,
    });
    const h = await historyOf(env, workflowId);
    expect(h.localResults).to.have.length(1);
    expect(h.localResults[0].attempt).to.include({ status: "to retry", statusCode: 503 });
    expect(h.queueSends).to.equal(1);
    expect(flaky.requests()).to.have.length(2);

    // The failure cooled the config down; the queue's fast success ends that: the next
    // first send is local again, not after the rest of the minute.
    const next = await flaky.send();
    expect(await env.result(flaky.config.id, next.event.idempotency_key)).to.include({ status: "success" });
    const h2 = await historyOf(env, next.workflowId);
    expect(h2.queueSends).to.equal(0);
    expect(h2.localResults[0].attempt).to.include({ status: "success", statusCode: 200 });
  });

  it("keeps a fast receiver local while many others hang: no workflow task times out", async () => {
    const HANGING = 50;
    const PER_HANGING = 4;
    const FAST = 100;
    const hanging = await Promise.all(Array.from({ length: HANGING }, () => endpoint(() => {})));
    const fast = await endpoint((_n, res) => res.writeHead(200).end());
    const sent: { workflowId: string; configId: string; key: string }[] = [];
    const fastSent: typeof sent = [];
    for (let i = 0; i < FAST; i++) {
      for (const h of i < PER_HANGING ? hanging : []) {
        const { event, workflowId } = await h.send();
        sent.push({ workflowId, configId: h.config.id, key: event.idempotency_key });
      }
      const { event, workflowId } = await fast.send();
      fastSent.push({ workflowId, configId: fast.config.id, key: event.idempotency_key });
    }
    for (const f of fastSent)
      expect(await env.result(f.configId, f.key, 60_000), f.workflowId).to.include({ status: "success" });
    // Every fast delivery was sent from the workflow worker, none through the queue that the
    // hanging receivers fill.
    for (const f of fastSent) {
      const h = await historyOf(env, f.workflowId);
      expect(h.queueSends, `${f.workflowId}: ${JSON.stringify(h.localResults)}`).to.equal(0);
      expect(h.workflowTaskTimeouts, f.workflowId).to.equal(0);
    }
    // The hanging receivers' deliveries hold no workflow task: a first send waits at most its
    // budget here (until its config cools down, or too many POSTs are out), then the queue.
    let waitedHere = 0;
    for (const s of sent) {
      const h = await historyOf(env, s.workflowId);
      expect(h.workflowTaskTimeouts, s.workflowId).to.equal(0);
      waitedHere += h.localResults.filter((r) => r.detached).length;
    }
    console.log(
      `      ${sent.length} deliveries to hanging receivers, ${waitedHere} waited out their budget here`,
    );
    expect(waitedHere).to.be.greaterThan(0);
  });

  it("counts first sends by where they went, and shows the POSTs still out", async () => {
    const count = (outcome: string) => metric(env.api, "webhooks_first_sends_total", { outcome });
    expect(await count("local")).to.be.greaterThan(100);
    expect(await count("over_budget")).to.be.greaterThan(0);
    expect(await count("skipped")).to.be.greaterThan(0);
    const text = await (await fetch(`${env.api.url}/metrics`)).text();
    expect(text).to.match(/^webhooks_first_sends_detached \d+$/m);
  });
});
