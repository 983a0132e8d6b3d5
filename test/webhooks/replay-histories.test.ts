import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { bundleWorkflowCode, DefaultLogger, Runtime, Worker } from "@temporalio/worker";
import { expect } from "chai";
import { fromRoot } from "../../common/paths.js";

const HISTORIES = fromRoot("test", "histories");
const histories = () =>
  readdirSync(HISTORIES)
    .filter((f) => f.endsWith(".json"))
    .map((f) => ({
      workflowId: f.replace(/\.json$/, ""),
      history: JSON.parse(readFileSync(`${HISTORIES}/${f}`, "utf8")),
    }));

async function replayAll(workflowsPath: string) {
  const { code } = await bundleWorkflowCode({ workflowsPath, logger: new DefaultLogger("WARN") });
  const results: { workflowId: string; error?: unknown }[] = [];
  for await (const r of Worker.runReplayHistories({ workflowBundle: { code } }, histories())) results.push(r);
  return results;
}

/**
 * Histories recorded from real runs (test/histories/record.ts) replayed against
 * the current workflow code: a change that would break running deliveries
 * fails here instead of in production.
 */
describe("replaying recorded delivery histories", function () {
  this.timeout(120_000);

  before(() => {
    try {
      Runtime.install({ logger: new DefaultLogger("WARN") });
    } catch {
      // already installed by an earlier test in this process
    }
  });

  it("covers the recorded scenarios", () => {
    expect(histories().map((h) => h.workflowId)).to.include.members([
      "success",
      "retries-then-success",
      "permanent-failure",
      "cap-reached",
      "config-deactivated",
      "server-requested-delay",
      "replay",
      "local-retries-then-success",
    ]);
  });

  it("replays every history with the current workflow code", async () => {
    const results = await replayAll(fileURLToPath(new URL("../../workflows/index.js", import.meta.url)));
    expect(results).to.have.length(histories().length);
    for (const r of results) expect(r.error, `${r.workflowId}: ${r.error}`).to.equal(undefined);
  });

  it("fails replay for an incompatible change to the workflow", async () => {
    const results = await replayAll(
      fileURLToPath(new URL("../support/incompatible-delivery.js", import.meta.url)),
    );
    expect(results).to.have.length(histories().length);
    for (const r of results) {
      expect(r.error, r.workflowId).to.exist;
      expect((r.error as Error).name, r.workflowId).to.equal("DeterminismViolationError");
    }
  });
});
