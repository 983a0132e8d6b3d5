import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { WorkflowHandle } from "@temporalio/client";
import { defaultPayloadConverter } from "@temporalio/common";
import { historyToJSON } from "@temporalio/common/lib/proto-utils.js";
import { fromRoot } from "../../common/paths.js";
import { startDevServer } from "../../common/temporal-dev-server.js";
import { batchCollectorId, batchWorkflowId } from "../../core/batching.js";
import { searchAttributeCliArgs } from "../../workflows/search-attributes.js";
import { DeliveryEnv } from "../support/delivery-env.js";
import { BATCHED_SET } from "../support/history-sets.js";
import { freePort } from "../support/ports.js";
import { startRateLimitService } from "../support/ratelimit-service.js";
import { Receiver } from "../support/receiver.js";
import { stopTestTemporal } from "../support/temporal.js";

// Records the batched-delivery workflows' histories (workflows/batch-delivery.ts: the
// collector and one batch's workflow) from real runs into test/histories/<BATCHED_SET>/;
// test/webhooks/replay-histories.test.ts replays them with every other set.
//   npm run build && node dist/test/histories/record-batched.js

interface Scenario {
  /** Recorded as `<name>-collector` and `<name>-batch`. */
  name: string;
  events: number;
  maxEvents: number;
  /** The receiver's answer to the batch's n-th POST. */
  answer: (n: number) => number;
  deactivate?: boolean;
}

const scenarios: Scenario[] = [
  { name: "batch-full", events: 3, maxEvents: 3, answer: () => 200 },
  // Posted at once: the collector gets signals carrying several events each (add-many, from v2).
  { name: "batch-grouped", events: 30, maxEvents: 30, answer: () => 200 },
  { name: "batch-flushed-partial", events: 2, maxEvents: 10, answer: () => 200 },
  { name: "batch-retried", events: 2, maxEvents: 2, answer: (n) => (n <= 2 ? 500 : 200) },
  { name: "batch-failed", events: 2, maxEvents: 2, answer: () => 400 },
];

/** Recorded on a server that suggests continue-as-new this early: 20 batches hand over at least once. */
const SUGGEST_CONTINUE_AS_NEW_AT = 40;
const HANDOVER_EVENTS = 40;

const wait = async (what: string, ok: () => Promise<boolean> | boolean) => {
  for (let i = 0; !(await ok()); i++) {
    if (i > 600) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
};

const idle = (handle: WorkflowHandle) =>
  wait("the collector idle", async () =>
    (
      (await handle.query<{ currentDetails: string }>("__temporal_workflow_metadata")).currentDetails ?? ""
    ).startsWith("idle"),
  );

type History = Awaited<ReturnType<WorkflowHandle["fetchHistory"]>>;

async function save(dir: string, name: string, handle: WorkflowHandle): Promise<History> {
  const history = await handle.fetchHistory();
  const file = path.join(dir, `${name}.json`);
  await writeFile(file, `${historyToJSON(history)}\n`);
  process.stderr.write(`recorded ${path.relative(fromRoot(), file)} (${history.events?.length} events)\n`);
  return history;
}

/** Whether an add-many signal of the history carried more than one event. */
function hasGroupedSignal(history: History): boolean {
  return (history.events ?? []).some((e) => {
    const signal = e.workflowExecutionSignaledEventAttributes;
    if (signal?.signalName !== "add-many") return false;
    const items = defaultPayloadConverter.fromPayload<unknown[]>(signal.input!.payloads![0]!);
    return items.length > 1;
  });
}

async function main(): Promise<void> {
  const dir = fromRoot("test", "histories", BATCHED_SET);
  await mkdir(dir, { recursive: true });
  const receiver = await new Receiver().start();
  const env = await new DeliveryEnv().start([
    "--max-attempts",
    "4",
    "--min-backoff-delay",
    "1s",
    "--max-backoff-delay",
    "1s",
  ]);
  try {
    await recordHandOver(receiver, dir);
    for (const s of scenarios) {
      const type = s.name.replace(/-/g, "_");
      const config = await env.createConfig({
        endpoint: `${receiver.url}/${type}`,
        eventTypes: [`ledger.${type}`],
        batch: { maxEvents: s.maxEvents, maxWaitMs: 300 },
      });
      let posts = 0;
      let settled = false;
      receiver.respond = (r, res) => {
        if (r.path !== `/hook/${type}`) return void res.writeHead(200).end();
        const status = s.answer(++posts);
        if (status !== 500) settled = true;
        res.writeHead(status).end();
      };
      // At once, so the collector is fed grouped signals (add-many with several events, from v2).
      const answers = await Promise.all(
        Array.from({ length: s.events }, (_, i) =>
          env.api.call(
            "POST",
            "/events",
            env.event({ type, idempotency_key: `${s.name}-${i + 1}`, payload: { seq: i + 1 } }),
          ),
        ),
      );
      const first: string = answers[0]!.body.data.deliveries[0].webhookID;
      await wait("the batch's end", () => settled);
      const collector = env.temporal.workflow.getHandle(batchCollectorId(config.id));
      await idle(collector);
      const recorded = await save(dir, `${s.name}-collector`, collector);
      if (s.name === "batch-grouped" && !hasGroupedSignal(recorded))
        throw new Error("no signal carried several events: record again");
      let batchId = "";
      await wait("the batch's rows", async () => {
        const got = await env.api.call("GET", `/webhooks/${first}`);
        batchId = got.body.data?.attempts?.[0]?.batchID ?? "";
        return batchId !== "";
      });
      const batch = env.temporal.workflow.getHandle(batchWorkflowId(config.id, batchId));
      await batch.result();
      await save(dir, `${s.name}-batch`, batch);
    }
    await recordDeactivated(env, receiver, dir);
    await recordRateLimited(receiver, dir);
  } finally {
    await env.stop();
    await receiver.stop();
    await stopTestTemporal();
  }
}

/** A collector holding events when its config is deactivated: they close without a send. */
async function recordDeactivated(env: DeliveryEnv, receiver: Receiver, dir: string): Promise<void> {
  const config = await env.createConfig({
    endpoint: `${receiver.url}/deactivated`,
    eventTypes: ["ledger.batch_deactivated"],
    batch: { maxEvents: 50, maxWaitMs: 60_000 },
  });
  for (let seq = 1; seq <= 2; seq++)
    await env.api.call(
      "POST",
      "/events",
      env.event({ type: "batch_deactivated", idempotency_key: `deactivated-${seq}`, payload: { seq } }),
    );
  await env.api.call("PUT", `/configs/${config.id}/deactivate`);
  const collector = env.temporal.workflow.getHandle(batchCollectorId(config.id));
  await collector.result();
  await save(dir, "batch-deactivated-collector", collector);
}

/** A batch told to wait by the rate limit service (one POST a second), then sent. */
async function recordRateLimited(receiver: Receiver, dir: string): Promise<void> {
  const ratelimit = await startRateLimitService(
    "domain: webhooks\ndescriptors:\n  - key: config_id\n    rate_limit: { unit: second, requests_per_unit: 1 }\n",
  );
  const env = await new DeliveryEnv().start(["--ratelimit-addr", ratelimit.grpcAddress]);
  try {
    const config = await env.createConfig({
      endpoint: `${receiver.url}/limited`,
      eventTypes: ["ledger.batch_limited"],
      batch: { maxEvents: 2, maxWaitMs: 5000 },
    });
    receiver.respond = (_r, res) => res.writeHead(200).end();
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        env.api.call(
          "POST",
          "/events",
          env.event({ type: "batch_limited", idempotency_key: `limited-${i + 1}`, payload: { seq: i + 1 } }),
        ),
      ),
    );
    const batchIds = new Set<string>();
    await wait("every batch's rows", async () => {
      for (const a of answers) {
        const got = await env.api.call("GET", `/webhooks/${a.body.data.deliveries[0].webhookID}`);
        const id = got.body.data?.attempts?.[0]?.batchID;
        if (id) batchIds.add(id);
      }
      return batchIds.size === 3;
    });
    // The batch that waited longest: the most sends asked (each wait is one more).
    let longest: { handle: WorkflowHandle; sends: number } | undefined;
    for (const id of batchIds) {
      const handle = env.temporal.workflow.getHandle(batchWorkflowId(config.id, id));
      await handle.result();
      const sends = ((await handle.fetchHistory()).events ?? []).filter(
        (e) => e.activityTaskScheduledEventAttributes,
      ).length;
      if (!longest || sends > longest.sends) longest = { handle, sends };
    }
    if (!longest || longest.sends < 2) throw new Error("no batch waited for the rate limit: record again");
    await save(dir, "batch-rate-limited-batch", longest.handle);
  } finally {
    await env.stop();
    await ratelimit.stop();
  }
}

/** A collector that continues as new after enough batches: the run that handed over is kept. */
async function recordHandOver(receiver: Receiver, dir: string): Promise<void> {
  const server = await startDevServer({
    searchAttributes: searchAttributeCliArgs(),
    port: await freePort(),
    headless: true,
    logFile: path.join(await mkdtemp(path.join(tmpdir(), "etp-record-batched-")), "server.log"),
    dynamicConfig: { "limit.historyCount.suggestContinueAsNew": String(SUGGEST_CONTINUE_AS_NEW_AT) },
  });
  const env = await new DeliveryEnv().start([], server.address);
  try {
    const config = await env.createConfig({
      endpoint: `${receiver.url}/handover`,
      eventTypes: ["ledger.batch_handover"],
      batch: { maxEvents: 2, maxWaitMs: 100 },
    });
    let delivered = 0;
    receiver.respond = (r, res) => {
      if (r.path === "/hook/handover") delivered += (JSON.parse(r.body) as unknown[]).length;
      res.writeHead(200).end();
    };
    for (let seq = 1; seq <= HANDOVER_EVENTS; seq++)
      await env.api.call(
        "POST",
        "/events",
        env.event({ type: "batch_handover", idempotency_key: `handover-${seq}`, payload: { seq } }),
      );
    await wait("deliveries", () => delivered >= HANDOVER_EVENTS);
    const id = batchCollectorId(config.id);
    const runs = [];
    for await (const r of env.temporal.workflow.list({ query: `WorkflowId = "${id}"` })) runs.push(r);
    if (runs.length < 2) throw new Error("the collector did not continue as new");
    runs.sort((a, b) => a.startTime.getTime() - b.startTime.getTime());
    await save(dir, "batch-continued-as-new-collector", env.temporal.workflow.getHandle(id, runs[0]!.runId));
  } finally {
    await env.stop();
    await server.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
