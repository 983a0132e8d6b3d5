import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { historyToJSON } from "@temporalio/common/lib/proto-utils.js";
import { fromRoot } from "../../common/paths.js";
import { startDevServer } from "../../common/temporal-dev-server.js";
import { orderedWorkflowId } from "../../core/ordering.js";
import { searchAttributeCliArgs } from "../../workflows/search-attributes.js";
import { DeliveryEnv } from "../support/delivery-env.js";
import {
  type ORDERED_BATCHED_SCENARIOS,
  type ORDERED_FAST_SCENARIOS,
  type ORDERED_SCENARIOS,
  SEQUENCER_SET,
} from "../support/history-sets.js";
import { freePort } from "../support/ports.js";
import { Receiver } from "../support/receiver.js";
import { stopTestTemporal } from "../support/temporal.js";

// Records the ordered key sequencer's histories (workflows/key-sequencer.ts) from real runs
// into test/histories/<SEQUENCER_SET>/; test/webhooks/replay-histories.test.ts replays them
// with every other set. `--fast` records the local-first scenarios: the sequencer makes each
// first send itself (the delivery workflow children it starts for what follows are recorded
// next to it). `--batched` records a batched ordered config's, whose sequencer sends its
// backlog in batches of 3 (workflows/ordered-batches.ts).
//   npm run build && node dist/test/histories/record-ordered.js [--fast|--batched] [scenario …]

type Answer = (seq: number, calls: number) => number;
type Act = "skip" | "replay-head" | "deactivate" | "cancel-head";

interface Scenario {
  name:
    | (typeof ORDERED_SCENARIOS)[number]
    | (typeof ORDERED_FAST_SCENARIOS)[number]
    | (typeof ORDERED_BATCHED_SCENARIOS)[number];
  onFailure: "skip" | "block";
  answer: Answer;
  /** Done once the head's first attempt is in. */
  act?: Act;
  /** How long the receiver takes with event 1's first POST (past the local-first budget). */
  slowFirstMs?: number;
  /** Also record the delivery workflow the key's workflow started for event 1. */
  child?: boolean;
  /** Events posted (3 unless said): the ones after the first together, while it is sent. */
  events?: number;
}

const scenarios: Scenario[] = [
  { name: "ordered-in-order", onFailure: "skip", answer: () => 200 },
  { name: "ordered-head-retries", onFailure: "skip", answer: (seq, n) => (seq === 1 && n <= 2 ? 503 : 200) },
  { name: "ordered-head-skipped", onFailure: "skip", answer: (seq) => (seq === 1 ? 400 : 200) },
  {
    name: "ordered-blocked-then-skip",
    onFailure: "block",
    answer: (seq) => (seq === 1 ? 400 : 200),
    act: "skip",
  },
  {
    name: "ordered-blocked-then-replayed",
    onFailure: "block",
    answer: (seq, n) => (seq === 1 && n === 1 ? 400 : 200),
    act: "replay-head",
  },
  { name: "ordered-blocked-then-deactivated", onFailure: "block", answer: () => 400, act: "deactivate" },
  {
    name: "ordered-head-cancelled",
    onFailure: "skip",
    answer: (seq) => (seq === 1 ? 503 : 200),
    act: "cancel-head",
  },
];

/** --fast: a 503's retry comes soon, and a first send past 1 s hands over. */
const fastScenarios: Scenario[] = [
  { name: "ordered-fast-in-order", onFailure: "skip", answer: () => 200 },
  {
    name: "ordered-fast-first-send-retried",
    onFailure: "skip",
    answer: (seq, n) => (seq === 1 && n === 1 ? 503 : 200),
    child: true,
  },
  {
    name: "ordered-fast-blocked-then-skip",
    onFailure: "block",
    answer: (seq) => (seq === 1 ? 400 : 200),
    act: "skip",
  },
  {
    name: "ordered-fast-over-budget",
    onFailure: "skip",
    answer: () => 200,
    slowFirstMs: 2500,
    child: true,
  },
  // More first sends queued than one workflow task makes (SENDS_PER_TASK): a timer between.
  { name: "ordered-fast-long-queue", onFailure: "skip", answer: () => 200, slowFirstMs: 700, events: 40 },
];
const FAST_ARGS = ["--max-attempts", "4", "--local-send-budget", "1s"];

/** --batched: 6 events in batches of 3 (`answer` gets each batch's first event); 1 s retries. */
const batchedScenarios: Scenario[] = [
  { name: "ordered-batch-in-order", onFailure: "skip", answer: () => 200, events: 6 },
  {
    name: "ordered-batch-retried",
    onFailure: "skip",
    answer: (seq, n) => (seq === 1 && n === 1 ? 503 : 200),
    events: 6,
  },
  {
    name: "ordered-batch-blocked-then-skip",
    onFailure: "block",
    answer: (seq) => (seq === 1 ? 400 : 200),
    act: "skip",
    events: 6,
  },
];
const BATCH = { maxEvents: 3, maxWaitMs: 5_000 };

/** Recorded on a server that suggests continue-as-new this early: 12 events hand over at least once. */
const SUGGEST_CONTINUE_AS_NEW_AT = 40;
const HANDOVER_EVENTS = 12;

const wait = async (what: string, ok: () => Promise<boolean> | boolean) => {
  for (let i = 0; !(await ok()); i++) {
    if (i > 1500) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
};

/** How many events the receiver takes before a scenario is done (a failing head's are never taken). */
function expectedDeliveries(s: Scenario, batched: boolean, events: number): number {
  if (batched) return events - (s.answer(1, 9) === 200 ? 0 : BATCH.maxEvents);
  if (s.act === "deactivate") return 0;
  if (s.act === "replay-head") return events;
  return events - 1 + (s.answer(1, 9) === 200 ? 1 : 0);
}

async function main(): Promise<void> {
  const batched = process.argv.includes("--batched");
  const fast = process.argv.includes("--fast") || batched;
  const names = process.argv.slice(2).filter((a) => !a.startsWith("--"));
  const chosen = (batched ? batchedScenarios : fast ? fastScenarios : scenarios).filter(
    (s) => names.length === 0 || names.includes(s.name),
  );
  const dir = fromRoot("test", "histories", SEQUENCER_SET);
  await mkdir(dir, { recursive: true });
  const receiver = await new Receiver().start();
  const env = await new DeliveryEnv().start(
    fast ? FAST_ARGS : ["--max-attempts", "4", "--send-mode", "queue"],
  );
  try {
    if (!fast && (names.length === 0 || names.includes("ordered-continued-as-new")))
      await recordHandOver(receiver, dir);
    for (const s of chosen) {
      const type = s.name.replace(/-/g, "_");
      const config = await env.createConfig({
        endpoint: receiver.url,
        eventTypes: [`ledger.${type}`],
        ordering: { enabled: true, onFailure: s.onFailure },
        ...(batched ? { batch: BATCH } : {}),
      });
      const calls = new Map<number, number>();
      const delivered: number[] = [];
      receiver.respond = (r, res) => {
        // A batch's POST carries an array: it is answered by its first event.
        const body = JSON.parse(r.body) as { payload: { seq: number } } | { payload: { seq: number } }[];
        const seqs = (Array.isArray(body) ? body : [body]).map((e) => e.payload.seq);
        const seq = seqs[0]!;
        for (const n of seqs) calls.set(n, (calls.get(n) ?? 0) + 1);
        const status = s.answer(seq, calls.get(seq)!);
        const answer = () => {
          if (status === 200) delivered.push(...seqs);
          res.writeHead(status, status === 503 ? { "retry-after": fast ? "1" : "30" } : {}).end();
        };
        if (s.slowFirstMs && seq === 1 && calls.get(seq) === 1) setTimeout(answer, s.slowFirstMs);
        else answer();
      };
      const postEvent = async (seq: number) => {
        const r = await env.api.call(
          "POST",
          "/events",
          env.event({ type, idempotency_key: `${s.name}-${seq}`, ordering_key: "k", payload: { seq } }),
        );
        return r.body.data.deliveries[0].webhookID as string;
      };
      const events = s.events ?? 3;
      const webhookIds: string[] = [];
      if (batched) for (let seq = 1; seq <= events; seq++) webhookIds.push(await postEvent(seq));
      else if (s.events) {
        webhookIds.push(await postEvent(1));
        const rest = Array.from({ length: events - 1 }, (_, i) => i + 2);
        webhookIds.push(...(await Promise.all(rest.map(postEvent))));
      } else for (let seq = 1; seq <= events; seq++) webhookIds.push(await postEvent(seq));
      const key = async (state: string) =>
        (await env.api.call("GET", `/configs/${config.id}/ordering-keys?state=${state}`)).body.cursor.data
          .length === 1;
      if (s.act) {
        await wait("head's first attempt", () => (calls.get(1) ?? 0) >= 1);
        if (s.onFailure === "block") await wait("blocked", () => key("blocked"));
        if (s.act === "skip") await env.api.call("POST", `/configs/${config.id}/ordering-keys/k/skip`);
        if (s.act === "replay-head")
          await env.api.call("POST", `/webhooks/${webhookIds[0]}/replay`, undefined, {
            "idempotency-key": "history",
          });
        if (s.act === "deactivate") await env.api.call("PUT", `/configs/${config.id}/deactivate`);
        if (s.act === "cancel-head") await env.api.call("POST", `/webhooks/${webhookIds[0]}/cancel`);
      }
      const expected = expectedDeliveries(s, batched, events);
      await wait("deliveries", () => delivered.length >= expected);
      const handle = env.temporal.workflow.getHandle(orderedWorkflowId(config.id, "k"));
      // The key's workflow is idle (its children ended) once its details say so.
      await wait("idle", async () =>
        (
          (await handle.query<{ currentDetails: string }>("__temporal_workflow_metadata")).currentDetails ??
          ""
        ).startsWith("idle"),
      );
      const history = await handle.fetchHistory();
      const file = path.join(dir, `${s.name}.json`);
      await writeFile(file, `${historyToJSON(history)}\n`);
      process.stderr.write(
        `recorded ${path.relative(fromRoot(), file)} (${history.events?.length} events)\n`,
      );
      if (s.child) await recordChild(env, config.id, webhookIds[0]!, path.join(dir, `${s.name}-child.json`));
    }
  } finally {
    await env.stop();
    await receiver.stop();
    await stopTestTemporal();
  }
}

/** The delivery workflow of `webhookId`, started by its key's workflow after the first send. */
async function recordChild(
  env: DeliveryEnv,
  configId: string,
  webhookId: string,
  file: string,
): Promise<void> {
  const query = `WorkflowType = "deliverWebhook" AND WebhookConfigId = "${configId}" AND WebhookId = "${webhookId}"`;
  let id: string | undefined;
  await wait("the head's delivery workflow", async () => {
    for await (const w of env.temporal.workflow.list({ query }))
      if (w.status.name === "COMPLETED") id = w.workflowId;
    return id !== undefined;
  });
  const history = await env.temporal.workflow.getHandle(id!).fetchHistory();
  await writeFile(file, `${historyToJSON(history)}\n`);
  process.stderr.write(`recorded ${path.relative(fromRoot(), file)} (${history.events?.length} events)\n`);
}

/**
 * A key whose queue workflow continues as new with events still queued: the run that
 * handed over is kept, and the order the receiver saw is checked.
 */
async function recordHandOver(receiver: Receiver, dir: string): Promise<void> {
  const server = await startDevServer({
    searchAttributes: searchAttributeCliArgs(),
    port: await freePort(),
    headless: true,
    logFile: path.join(await mkdtemp(path.join(tmpdir(), "etp-record-ordered-")), "server.log"),
    dynamicConfig: { "limit.historyCount.suggestContinueAsNew": String(SUGGEST_CONTINUE_AS_NEW_AT) },
  });
  const env = await new DeliveryEnv().start(["--send-mode", "queue"], server.address);
  try {
    const config = await env.createConfig({
      endpoint: receiver.url,
      eventTypes: ["ledger.ordered_handover"],
      ordering: { enabled: true },
    });
    const delivered: number[] = [];
    receiver.respond = (r, res) => {
      delivered.push((JSON.parse(r.body).payload as { seq: number }).seq);
      res.writeHead(200).end();
    };
    for (let seq = 1; seq <= HANDOVER_EVENTS; seq++)
      await env.api.call(
        "POST",
        "/events",
        env.event({
          type: "ordered_handover",
          idempotency_key: `handover-${seq}`,
          ordering_key: "k",
          payload: { seq },
        }),
      );
    await wait("deliveries", () => delivered.length >= HANDOVER_EVENTS);
    const order = Array.from({ length: HANDOVER_EVENTS }, (_, i) => i + 1);
    if (JSON.stringify(delivered) !== JSON.stringify(order)) throw new Error(`out of order: ${delivered}`);
    const id = orderedWorkflowId(config.id, "k");
    const runs = [];
    for await (const r of env.temporal.workflow.list({ query: `WorkflowId = "${id}"` })) runs.push(r);
    if (runs.length < 2) throw new Error("the key's workflow did not continue as new");
    runs.sort((a, b) => a.startTime.getTime() - b.startTime.getTime());
    const history = await env.temporal.workflow.getHandle(id, runs[0]!.runId).fetchHistory();
    const file = path.join(dir, "ordered-continued-as-new.json");
    await writeFile(file, `${historyToJSON(history)}\n`);
    process.stderr.write(
      `recorded ${path.relative(fromRoot(), file)} (${history.events?.length} events, ${runs.length} runs)\n`,
    );
  } finally {
    await env.stop();
    await server.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
