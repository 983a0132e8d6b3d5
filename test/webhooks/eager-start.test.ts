import { expect } from "chai";
import { DeliveryEnv } from "../support/delivery-env.js";
import { freePort } from "../support/ports.js";
import { ServiceProcess } from "../support/process.js";
import { Receiver } from "../support/receiver.js";

/** Whether the server accepted eager execution of the workflow's first task (from its started event). */
async function startedEagerly(env: DeliveryEnv, workflowId: string): Promise<boolean> {
  const history = await env.temporal.workflow.getHandle(workflowId).fetchHistory();
  const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
  if (!started) throw new Error(`${workflowId}: first event is not WorkflowExecutionStarted`);
  return Boolean(started.eagerExecutionAccepted);
}

async function metric(env: DeliveryEnv, name: string): Promise<number> {
  const text = await (await fetch(`${env.api.url}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${name} `));
  return Number(line?.split(" ")[1] ?? Number.NaN);
}

describe("eager workflow start of deliveries", function () {
  this.timeout(120_000);
  let receiver: Receiver;

  before(async () => {
    receiver = await new Receiver().start();
  });
  after(async () => {
    await receiver?.stop();
  });

  /** One config of its own event type on `env`, and a way to publish events for it. */
  async function setup(env: DeliveryEnv) {
    const type = `eager_${Math.random().toString(36).slice(2)}`;
    const path = `/hook-${type}`;
    const config = await env.createConfig({
      endpoint: receiver.url.replace("/hook", path),
      eventTypes: [`ledger.${type}`],
    });
    return {
      config,
      requests: () => receiver.requests.filter((r) => r.path === path),
      event: () => env.event({ type }),
    };
  }

  /**
   * Publishes `n` events at once for a new config on `env` and waits until every one was
   * delivered with one attempt; the workflow ids of the deliveries.
   */
  async function deliverBurst(env: DeliveryEnv, n: number): Promise<string[]> {
    const { config, requests, event: make } = await setup(env);
    const events = Array.from({ length: n }, () => make());
    await Promise.all(events.map((e) => env.publish(e)));
    for (const e of events) {
      expect(await env.result(config.id, e.idempotency_key)).to.include({ status: "success", attempts: 1 });
    }
    expect(requests()).to.have.length(n);
    return events.map((e) => env.workflowId(config.id, e.idempotency_key));
  }

  describe("consumer and workflow worker in one process (the default)", () => {
    const env = new DeliveryEnv();
    before(() => env.start());
    after(() => env.stop());

    it("hands the first workflow task to the process's own worker and delivers", async () => {
      const { config, requests, event: make } = await setup(env);
      const event = make();
      await env.publish(event);
      const result = await env.result(config.id, event.idempotency_key);
      expect(result).to.include({ status: "success", attempts: 1 });
      expect(requests()).to.have.length(1);
      expect(await startedEagerly(env, env.workflowId(config.id, event.idempotency_key))).to.equal(true);
      expect(await metric(env, "webhooks_workflows_started_eagerly_total")).to.be.at.least(1);
    });
    // A redelivered event starts nothing: delivery.test.ts runs that case with eager start on (the default).
  });

  describe("a burst larger than the worker's workflow-task slots", () => {
    const env = new DeliveryEnv();
    before(() => env.start(["--max-concurrent-workflow-tasks", "6"]));
    after(() => env.stop());

    it("starts every delivery eagerly: starts wait for a free slot instead of queueing in the server", async () => {
      const workflowIds = await deliverBurst(env, 60);
      const eager = await Promise.all(workflowIds.map((id) => startedEagerly(env, id)));
      expect(eager.filter((x) => !x)).to.have.length(0);
      // What an operator sees: idle polls hold slots, and no start waits once the burst is in.
      expect(await metric(env, "webhooks_workflow_task_slots_held")).to.be.within(1, 6);
      expect(await metric(env, "webhooks_starts_waiting_for_slot")).to.equal(0);
    });
  });

  describe("with no more workflow-task slots than the polls can hold", () => {
    const env = new DeliveryEnv();
    before(() => env.start(["--max-concurrent-workflow-tasks", "2"]));
    after(() => env.stop());

    it("starts without waiting for a slot (one could wait the full 10 s for nothing)", async () => {
      const published = Date.now();
      await deliverBurst(env, 10);
      expect(Date.now() - published).to.be.below(10_000);
    });
  });

  describe("with two workflow-task slots and sends in the workflow worker", () => {
    // Deliveries that end in their first task leave the sticky queue's poll nothing to
    // bring: it must not hold the slot that the first tasks of new deliveries need.
    const env = new DeliveryEnv();
    before(() => env.start(["--max-concurrent-workflow-tasks", "2", "--send-mode", "local"]));
    after(() => env.stop());

    it("delivers a burst without first tasks waiting for a long poll", async () => {
      const published = Date.now();
      await deliverBurst(env, 10);
      expect(Date.now() - published).to.be.below(10_000);
    });
  });

  describe("with --no-eager-start", () => {
    const env = new DeliveryEnv();
    before(() => env.start(["--no-eager-start"]));
    after(() => env.stop());

    it("starts through the task queue and delivers", async () => {
      const { config, event: make } = await setup(env);
      const event = make();
      await env.publish(event);
      expect(await env.result(config.id, event.idempotency_key)).to.include({ status: "success" });
      expect(await startedEagerly(env, env.workflowId(config.id, event.idempotency_key))).to.equal(false);
      expect(await metric(env, "webhooks_workflows_started_eagerly_total")).to.equal(0);
    });
  });

  describe("consumer in a process without the workflow worker", () => {
    const env = new DeliveryEnv();
    let flow: ServiceProcess;
    before(async () => {
      await env.start(["--task-queues", "sends,maintenance"]);
      const port = await freePort();
      flow = new ServiceProcess("webhooks", [
        "worker",
        "--listen",
        `127.0.0.1:${port}`,
        "--storage-sqldb-conn-string",
        env.api.db.url,
        "--temporal-address",
        env.api.temporalAddress,
        "--task-queue",
        env.api.taskQueue,
        "--task-queues",
        "workflows",
        "--no-consume",
      ]);
      await flow.waitHealthy(`http://127.0.0.1:${port}/_healthcheck`);
    });
    after(async () => {
      await flow?.stop();
      await env.stop();
    });

    it("starts plainly and the other process's worker runs the delivery", async () => {
      const { config, requests, event: make } = await setup(env);
      const event = make();
      await env.publish(event);
      expect(await env.result(config.id, event.idempotency_key)).to.include({ status: "success" });
      expect(requests()).to.have.length(1);
      expect(await startedEagerly(env, env.workflowId(config.id, event.idempotency_key))).to.equal(false);
      expect(await metric(env, "webhooks_workflows_started_eagerly_total")).to.equal(0);
    });
  });
});
