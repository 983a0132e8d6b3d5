import { fileURLToPath } from "node:url";
import { bundleWorkflowCode, DefaultLogger, Runtime, Worker } from "@temporalio/worker";
import { expect } from "chai";
import { DeliveryEnv } from "../support/delivery-env.js";
import { Receiver } from "../support/receiver.js";
import { replaySinks } from "../support/replay-sinks.js";

/**
 * Histories written by the production server (not the dev server) replay with
 * the current workflow code: deliveries on each path run on it, then their
 * histories are fetched from it and replayed.
 */
describe("replaying histories recorded on the production Temporal server", function () {
  this.timeout(180_000);
  const env = new DeliveryEnv();
  const receiver = new Receiver();

  before(async () => {
    try {
      Runtime.install({ logger: new DefaultLogger("WARN") });
    } catch {
      // already installed by an earlier test in this process
    }
    await receiver.start();
    await env.start(["--max-attempts", "3"]);
  });
  after(async () => {
    await env.stop();
    await receiver.stop();
  });

  it("replays success, retries, permanent failure, exhausted attempts and deactivation", async () => {
    const scenarios: Record<string, (calls: number) => number> = {
      success: () => 200,
      retried: (calls) => (calls <= 2 ? 503 : 200),
      permanent: () => 410,
      exhausted: () => 500,
    };
    const calls = new Map<string, number>();
    receiver.respond = (req, res) => {
      const name = req.path.slice(1);
      calls.set(name, (calls.get(name) ?? 0) + 1);
      const status = name === "deactivated" ? 503 : scenarios[name]!(calls.get(name)!);
      res.writeHead(status).end();
    };
    const ids: string[] = [];
    const configs = new Map<string, string>();
    for (const name of [...Object.keys(scenarios), "deactivated"]) {
      const config = await env.createConfig({
        endpoint: receiver.url.replace("/hook", `/${name}`),
        eventTypes: [`ledger.${name}`],
      });
      configs.set(name, config.id);
      const event = env.event({ type: name.toUpperCase() });
      await env.publish(event);
      ids.push(env.workflowId(config.id, event.idempotency_key));
    }
    // The deactivated config's delivery waits for its retry when the close signal comes.
    const deactivated = configs.get("deactivated")!;
    while ((calls.get("deactivated") ?? 0) < 1) await new Promise((r) => setTimeout(r, 50));
    expect((await env.api.call("PUT", `/configs/${deactivated}/deactivate`)).status).to.equal(200);

    const statuses: string[] = [];
    for (const id of ids) statuses.push((await env.temporal.workflow.getHandle(id).result()).status);
    expect(statuses).to.deep.equal(["success", "success", "failed", "failed", "failed"]);

    const histories = await Promise.all(
      ids.map(async (workflowId) => ({
        workflowId,
        history: await env.temporal.workflow.getHandle(workflowId).fetchHistory(),
      })),
    );
    const { code } = await bundleWorkflowCode({
      workflowsPath: fileURLToPath(new URL("../../workflows/index.js", import.meta.url)),
      logger: new DefaultLogger("WARN"),
    });
    const results = [];
    for await (const r of Worker.runReplayHistories(
      { workflowBundle: { code }, sinks: replaySinks },
      histories,
    ))
      results.push(r);
    expect(results).to.have.length(ids.length);
    for (const r of results) expect(r.error, `${r.workflowId}: ${r.error}`).to.equal(undefined);
  });
});
