import { historyToJSON } from "@temporalio/common/lib/proto-utils.js";
import { expect } from "chai";
import { verifySignature } from "../../activities/signature.js";
import { DeliveryEnv } from "../support/delivery-env.js";
import { Receiver } from "../support/receiver.js";

const SECRET = Buffer.alloc(24, 5).toString("base64");

/** Event types of a workflow history, in order. */
async function historyEvents(env: DeliveryEnv, workflowId: string): Promise<string[]> {
  const history = await env.temporal.workflow.getHandle(workflowId).fetchHistory();
  const events = (JSON.parse(historyToJSON(history)) as { events: { eventType: string }[] }).events;
  return events.map((e) => e.eventType);
}

describe("--send-mode local: sends as local activities of the workflow worker", function () {
  this.timeout(120_000);
  const env = new DeliveryEnv();
  let receiver: Receiver;

  before(async () => {
    // The process polls only the workflow queue: a send on <task-queue>-sends would never run.
    await env.start(["--send-mode", "local", "--task-queues", "workflows", "--max-attempts", "3"]);
    receiver = await new Receiver().start();
  });
  after(async () => {
    await receiver?.stop();
    await env.stop();
  });

  const setup = async () => {
    const type = `local_${Math.random().toString(36).slice(2)}`;
    const path = `/hook-${type}`;
    const config = await env.createConfig({
      endpoint: receiver.url.replace("/hook", path),
      eventTypes: [`ledger.${type}`],
      secret: SECRET,
    });
    return {
      config,
      requests: () => receiver.requests.filter((r) => r.path === path),
      event: env.event({ type }),
    };
  };

  it("delivers a signed POST without any activity task and records the attempt row", async () => {
    receiver.respond = (_req, res) => res.writeHead(204).end();
    const { config, requests, event } = await setup();
    await env.publish(event);
    const result = await env.result(config.id, event.idempotency_key);
    expect(result).to.include({ status: "success", attempts: 1, lastStatusCode: 204 });
    const [req] = requests();
    const headers = {
      id: String(req!.headers["svc-webhook-id"]),
      timestamp: String(req!.headers["svc-webhook-timestamp"]),
      signature: String(req!.headers["svc-webhook-signature"]),
    };
    expect(verifySignature(SECRET, headers, req!.body)).to.equal(true);
    const rows = await env.attempts(config.id);
    expect(rows.map((r) => [r.retry_attempt, r.status, r.status_code])).to.deep.equal([[0, "success", 204]]);
    const events = await historyEvents(env, env.workflowId(config.id, event.idempotency_key));
    expect(events.some((e) => e.includes("ACTIVITY_TASK_SCHEDULED"))).to.equal(false);
    expect(events.some((e) => e.includes("MARKER_RECORDED"))).to.equal(true);
  });

  it("retries on durable timers, claims and supersedes rows as in queue mode, and stops at the cap", async () => {
    receiver.respond = (_req, res) => res.writeHead(503).end();
    const { config, requests, event } = await setup();
    await env.publish(event);
    const result = await env.result(config.id, event.idempotency_key);
    expect(result).to.include({ status: "failed", attempts: 3, lastStatusCode: 503 });
    expect(requests()).to.have.length(3);
    const rows = await env.attempts(config.id);
    expect(rows.map((r) => [r.retry_attempt, r.status, r.status_code])).to.deep.equal([
      [0, "failed", 503],
      [1, "failed", 503],
      [2, "failed", 503],
    ]);
    const events = await historyEvents(env, env.workflowId(config.id, event.idempotency_key));
    expect(events.filter((e) => e.includes("TIMER_STARTED"))).to.have.length(2);
  });
});
