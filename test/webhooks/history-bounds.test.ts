// tags: @temporal-server-only (only on the production Temporal server, npm run test:temporal-server:
// the server's history sizes and timers)
import { expect } from "chai";
import pg from "pg";
import type { DeliveryInput } from "../../activities/delivery-types.js";
import { parseEventMessage, webhookIdFor } from "../../core/event-message.js";
import { eventIdOf } from "../../core/stored-events.js";
import { sendQueue } from "../../workers/task-queues.js";
import { deliverWebhook } from "../../workflows/delivery.js";
import { DeliveryEnv } from "../support/delivery-env.js";
import { Receiver } from "../support/receiver.js";

const ATTEMPTS = 60;
const TWO_MIB = 2 * 1024 * 1024;

/**
 * A delivery of a large event that retries many times keeps every run's history small.
 * A delivery carries its event by reference (core/stored-events.ts): a few hundred bytes
 * per send whatever the event's size. A delivery started before that carries the event
 * in its input and into each send: its retry loop continues as new once a run passes
 * 1 MiB. Before both, 60 attempts of a 200 KiB event grew one history to tens of MiB
 * (Temporal terminates a workflow at 50 MiB, and reconciliation then closed its row).
 */
describe("history stays bounded on every path", function () {
  this.timeout(240_000);
  const env = new DeliveryEnv();
  let receiver: Receiver;

  // Both deliveries wait a second between attempts: they run at once, each test checks one.
  let running:
    | { byReference: ReturnType<typeof byReference>; byValue: ReturnType<typeof byValue> }
    | undefined;
  before(async () => {
    receiver = await new Receiver().start();
    receiver.respond = (_req, res) => res.writeHead(503).end();
    await env.start([
      ...["--min-backoff-delay", "1s", "--max-backoff-delay", "1s"],
      ...["--max-attempts", String(ATTEMPTS), "--abort-after", "1h"],
    ]);
    running = { byReference: byReference(), byValue: byValue() };
    // Each is awaited by its test; a failure before then must not go unhandled.
    for (const p of Object.values(running)) p.catch(() => {});
  });
  after(async () => {
    await receiver?.stop();
    await env.stop();
  });

  /** The history size of every run of the workflow, oldest first. */
  const runSizes = async (workflowId: string) => {
    const sizes: number[] = [];
    for await (const run of env.temporal.workflow.list({ query: `WorkflowId = "${workflowId}"` })) {
      const d = await env.temporal.workflow.getHandle(workflowId, run.runId).describe();
      sizes.push(Number(d.raw.workflowExecutionInfo?.historySizeBytes ?? 0));
    }
    console.log(
      `      ${sizes.length} runs, history sizes ${sizes.map((b) => `${(b / 1024).toFixed(0)} KiB`).join(", ")}`,
    );
    return sizes;
  };

  /** Every attempt written once, the last closed by the delivery's own workflow at its cap. */
  const expectClosedAtCap = async (configId: string) => {
    // (A row closed by reconciliation names the workflow's state in its reason.)
    const rows = await env.attempts(configId);
    expect(rows.map((r) => r.retry_attempt)).to.deep.equal([...Array(ATTEMPTS).keys()]);
    expect(rows.every((r) => r.status === "failed")).to.equal(true);
    expect(rows.at(-1)!.error).to.equal(`max attempts (${ATTEMPTS}) reached`);
  };

  /** The delivery by reference, started in `before`: the config and its result. */
  const byReference = async () => {
    const config = await env.createConfig({ endpoint: receiver.url });
    const event = env.event({ payload: { blob: "x".repeat(200 * 1024) } });
    await env.publish(event);
    const result = await env.result(config.id, event.idempotency_key, 200_000);
    return { config, event, result };
  };

  /** The delivery by value, started in `before` as the previous version started it. */
  const byValue = async () => {
    // Its own event type: the event published meanwhile for the other delivery must not match it.
    const config = await env.createConfig({ endpoint: receiver.url, eventTypes: ["ledger.by_value"] });
    const event = parseEventMessage(
      Buffer.from(JSON.stringify(env.event({ payload: { blob: "x".repeat(200 * 1024) } }))),
    );
    const workflowId = env.workflowId(config.id, event.idempotency_key);
    // The input a delivery started by the previous version carries: the event itself.
    const input: DeliveryInput = {
      webhookId: webhookIdFor(workflowId),
      configId: config.id,
      event,
      policy: {
        minBackoffMs: 1000,
        maxBackoffMs: 1000,
        abortAfterMs: 3_600_000,
        maxAttempts: ATTEMPTS,
        sendTimeoutMs: 30_000,
      },
      sendTaskQueue: sendQueue(env.api.taskQueue),
      acceptedAt: new Date().toISOString(),
    };
    await env.temporal.workflow.start(deliverWebhook, {
      taskQueue: env.api.taskQueue,
      workflowId,
      args: [input],
    });
    const result = await env.result(config.id, event.idempotency_key, 200_000);
    return { config, event, workflowId, result };
  };

  it(`${ATTEMPTS} attempts of a 200 KiB event by reference: one run whose history never holds the event`, async () => {
    const { config, event, result } = await running!.byReference;
    expect(result).to.include({
      status: "failed",
      attempts: ATTEMPTS,
      reason: `max attempts (${ATTEMPTS}) reached`,
    });
    const sizes = await runSizes(env.workflowId(config.id, event.idempotency_key));
    // 60 sends of 200 KiB by value made one history of 24 MiB: by reference the whole
    // delivery stays under one copy of its event.
    expect(sizes).to.have.length(1);
    expect(sizes[0])
      .to.be.greaterThan(0)
      .and.below(200 * 1024);
    await expectClosedAtCap(config.id);
  });

  it(`${ATTEMPTS} attempts of a 200 KiB event carried by value (deliveries started before events were stored): every run under 2 MiB`, async () => {
    const { config, event, workflowId, result } = await running!.byValue;
    expect(result).to.include({
      status: "failed",
      attempts: ATTEMPTS,
      reason: `max attempts (${ATTEMPTS}) reached`,
    });
    const sizes = await runSizes(workflowId);
    expect(sizes.length).to.be.greaterThan(1);
    for (const size of sizes) expect(size).to.be.greaterThan(0).and.below(TWO_MIB);
    await expectClosedAtCap(config.id);
    // Every send POSTed the event as carried; the first stored it, and every row references it.
    // (The delivery by reference POSTs to the same receiver meanwhile: its webhook id differs.)
    const own = receiver.requests.filter((r) => r.headers["svc-webhook-id"] === webhookIdFor(workflowId));
    expect(own).to.have.length(ATTEMPTS);
    const bodies = new Set(own.map((r) => r.body));
    expect([...bodies]).to.deep.equal([JSON.stringify(event)]);
    const db = new pg.Client({ connectionString: env.api.db.url });
    await db.connect();
    try {
      const { rows } = await db.query(
        "SELECT DISTINCT event_id, payload FROM attempts WHERE config_id = $1",
        [config.id],
      );
      expect(rows).to.deep.equal([{ event_id: eventIdOf(JSON.stringify(event)), payload: null }]);
    } finally {
      await db.end();
    }
  });
});
