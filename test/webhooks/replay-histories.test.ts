import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { OpenTelemetryPlugin } from "@temporalio/interceptors-opentelemetry-v2";
import { bundleWorkflowCode, DefaultLogger, Runtime, Worker } from "@temporalio/worker";
import { expect } from "chai";
import { fromRoot } from "../../common/paths.js";
import { BATCHED_SCENARIOS, BATCHED_SET, CURRENT_SET, SCENARIOS } from "../support/history-sets.js";
import { replaySinks } from "../support/replay-sinks.js";

const HISTORIES = fromRoot("test", "histories");
/** Every recorded history of every set, named `<set>/<scenario>`. */
const histories = () =>
  readdirSync(HISTORIES, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .flatMap((set) =>
      readdirSync(path.join(HISTORIES, set.name))
        .filter((f) => f.endsWith(".json"))
        .map((f) => ({
          workflowId: `${set.name}/${f.replace(/\.json$/, "")}`,
          history: JSON.parse(readFileSync(path.join(HISTORIES, set.name, f), "utf8")),
        })),
    );

async function replayAll(workflowsPath: string, plugins: OpenTelemetryPlugin[] = []) {
  const { code } = await bundleWorkflowCode({ workflowsPath, logger: new DefaultLogger("WARN"), plugins });
  const results: { workflowId: string; error?: unknown }[] = [];
  for await (const r of Worker.runReplayHistories(
    { workflowBundle: { code }, plugins, sinks: replaySinks },
    histories(),
  ))
    results.push(r);
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

  it("has every path of the current workflow recorded, and keeps the earlier sets", () => {
    const names = histories().map((h) => h.workflowId);
    expect(names).to.include.members(SCENARIOS.map((s) => `${CURRENT_SET}/${s}`));
    expect(names).to.include.members(["v1/success", "v1/config-deactivated", "v1/rate-limit-waits"]);
  });

  it("has every path of the batched-delivery workflows recorded", () => {
    const names = histories().map((h) => h.workflowId);
    expect(names).to.include.members(BATCHED_SCENARIOS.map((s) => `${BATCHED_SET}/${s}`));
  });

  it("replays every history with the current workflow code", async () => {
    const results = await replayAll(fileURLToPath(new URL("../../workflows/index.js", import.meta.url)));
    expect(results).to.have.length(histories().length);
    for (const r of results) expect(r.error, `${r.workflowId}: ${r.error}`).to.equal(undefined);
  });

  it("replays them with the code versioned workers bundle (workflows/versioned.ts)", async () => {
    // Unversioned deliveries move to the first versioned build; AutoUpgrade workflows to each next one.
    const results = await replayAll(fileURLToPath(new URL("../../workflows/versioned.js", import.meta.url)));
    expect(results).to.have.length(histories().length);
    for (const r of results) expect(r.error, `${r.workflowId}: ${r.error}`).to.equal(undefined);
  });

  it("replays them with the tracing interceptors too (--tracing turned on for running deliveries)", async () => {
    const exporter = new InMemorySpanExporter();
    const tracing = new OpenTelemetryPlugin({
      resource: resourceFromAttributes({ "service.name": "replay" }),
      spanProcessor: new SimpleSpanProcessor(exporter),
    });
    const results = await replayAll(fileURLToPath(new URL("../../workflows/index.js", import.meta.url)), [
      tracing,
    ]);
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
