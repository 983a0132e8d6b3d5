import { expect } from "chai";
import { DeliveryEnv } from "../support/delivery-env.js";
import { Receiver } from "../support/receiver.js";

const ATTEMPTS = 60;
const TWO_MIB = 2 * 1024 * 1024;

/**
 * A delivery of a large event that retries many times keeps every run's history small:
 * its re-sends' claims carry ids, not the event, and the retry loop continues as new once
 * a run passes 1 MiB. Before, 60 attempts of a 200 KiB event grew one history to tens of
 * MiB (Temporal terminates a workflow at 50 MiB, and reconciliation then closed its row).
 */
describe("history stays bounded on every path", function () {
  this.timeout(240_000);
  const env = new DeliveryEnv();
  let receiver: Receiver;

  before(async () => {
    receiver = await new Receiver().start();
    receiver.respond = (_req, res) => res.writeHead(503).end();
    await env.start([
      ...["--min-backoff-delay", "1s", "--max-backoff-delay", "1s"],
      ...["--max-attempts", String(ATTEMPTS), "--abort-after", "1h"],
    ]);
  });
  after(async () => {
    await receiver?.stop();
    await env.stop();
  });

  it(`${ATTEMPTS} attempts of a 200 KiB event: every run under 2 MiB, closed by the workflow at its cap`, async () => {
    const config = await env.createConfig({ endpoint: receiver.url });
    const event = env.event({ payload: { blob: "x".repeat(200 * 1024) } });
    await env.publish(event);
    const result = await env.result(config.id, event.idempotency_key, 200_000);
    expect(result).to.include({
      status: "failed",
      attempts: ATTEMPTS,
      reason: `max attempts (${ATTEMPTS}) reached`,
    });
    expect(receiver.requests).to.have.length(ATTEMPTS);

    const workflowId = env.workflowId(config.id, event.idempotency_key);
    const sizes: number[] = [];
    for await (const run of env.temporal.workflow.list({ query: `WorkflowId = "${workflowId}"` })) {
      const d = await env.temporal.workflow.getHandle(workflowId, run.runId).describe();
      sizes.push(Number(d.raw.workflowExecutionInfo?.historySizeBytes ?? 0));
    }
    console.log(
      `      ${sizes.length} runs, history sizes ${sizes.map((b) => `${(b / 1024).toFixed(0)} KiB`).join(", ")}`,
    );
    expect(sizes.length).to.be.greaterThan(1);
    for (const size of sizes) expect(size).to.be.greaterThan(0).and.below(TWO_MIB);

    // Every attempt written once, and the last closed by the delivery's own workflow (a row
    // closed by reconciliation names the workflow's state in its reason).
    const rows = await env.attempts(config.id);
    expect(rows.map((r) => r.retry_attempt)).to.deep.equal([...Array(ATTEMPTS).keys()]);
    expect(rows.every((r) => r.status === "failed")).to.equal(true);
    expect(rows.at(-1)!.error).to.equal(`max attempts (${ATTEMPTS}) reached`);
  });
});
