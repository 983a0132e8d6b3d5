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
