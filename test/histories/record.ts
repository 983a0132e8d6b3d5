import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { historyToJSON } from "@temporalio/common/lib/proto-utils.js";
import type { temporal } from "@temporalio/proto";
import pg from "pg";
import { fromRoot } from "../../common/paths.js";
import { type DevServer, startDevServer } from "../../common/temporal-dev-server.js";
import { searchAttributeCliArgs } from "../../workflows/search-attributes.js";
import { DeliveryEnv } from "../support/delivery-env.js";
import { CURRENT_SET, type SCENARIOS } from "../support/history-sets.js";
import { freePort } from "../support/ports.js";
import {
  perConfigPerSecond,
  type RateLimitUnderTest,
  startRateLimitService,
} from "../support/ratelimit-service.js";
import { Receiver } from "../support/receiver.js";
import { stopTestTemporal } from "../support/temporal.js";

// Records the delivery workflow histories replayed by
// test/webhooks/replay-histories.test.ts, from real runs against a Temporal
// dev server, into test/histories/<set>/ (see test/support/history-sets.ts).
//   npm run record-histories -- [--set NAME] [scenario …]
// (every scenario into CURRENT_SET when nothing is named).

/** Status, headers and how long the receiver takes to answer (ms). */
type Respond = (calls: number) => [number, Record<string, string>?, number?];
type After = "deactivate" | "reactivate" | "replay" | "cancel" | "close-row" | "lose-workflow";

interface Scenario {
  name: (typeof SCENARIOS)[number];
  respond: Respond;
  /** What happens once the first attempt is recorded. */
  after?: After;
  /** Recorded with `--send-mode local` (sends as local activities). */
  local?: true;
  /** Recorded with `--send-mode local-first` (the default since v4) and a 1 s budget. */
  localFirst?: true;
  /** Recorded through the rate limit service, one send a second per config; this many events at once. */
  rateLimitedBurst?: number;
  /** Of a burst, record the run that continued as new (`first`) or the run that resumed (`last`). */
  run?: "first" | "last";
  /** Recorded on a server that suggests continue-as-new early, with more attempts allowed. */
  longRetries?: true;
}

/** The retry comes late, so what `after` does reaches the delivery while it waits. */
const LATER: Respond = () => [503, { "retry-after": "30" }];

const scenarios: Scenario[] = [
  { name: "success", respond: () => [200] },
  { name: "retries-then-success", respond: (n) => [n <= 2 ? 500 : 200] },
  { name: "permanent-failure", respond: () => [410] },
  { name: "cap-reached", respond: () => [503] },
  { name: "config-deactivated", respond: LATER, after: "deactivate" },
  { name: "config-reactivated", respond: LATER, after: "reactivate" },
  { name: "server-requested-delay", respond: (n) => (n === 1 ? [429, { "retry-after": "1" }] : [200]) },
  { name: "replay", respond: () => [200], after: "replay" },
  { name: "cancelled", respond: LATER, after: "cancel" },
  {
    name: "claim-finds-row-closed",
    respond: (n) => [503, { "retry-after": n === 1 ? "2" : "0" }],
    after: "close-row",
  },
  {
    name: "restarted-by-reconciliation",
    respond: (n) => (n === 1 ? [503, { "retry-after": "3" }] : [200]),
    after: "lose-workflow",
  },
  { name: "local-retries-then-success", respond: (n) => [n <= 1 ? 500 : 200], local: true },
  { name: "local-first-success", respond: () => [200], localFirst: true },
  { name: "local-first-handed-over", respond: () => [200, {}, 2500], localFirst: true },
  { name: "local-first-retries", respond: (n) => [n <= 1 ? 500 : 200], localFirst: true },
  { name: "rate-limit-waits", respond: () => [200], rateLimitedBurst: 3 },
  { name: "continued-as-new", respond: () => [200], rateLimitedBurst: 8, run: "first" },
  { name: "resumed-after-continue-as-new", respond: () => [200], rateLimitedBurst: 8, run: "last" },
  {
    name: "continued-as-new-while-retrying",
    respond: (n) => [n <= 6 ? 503 : 200],
    longRetries: true,
    run: "first",
  },
];

type Group = "queue" | "local" | "local-first" | "rate-limited" | "long-retries";
const groupOf = (s: Scenario): Group =>
  s.local
    ? "local"
    : s.localFirst
      ? "local-first"
      : s.rateLimitedBurst
        ? "rate-limited"
        : s.longRetries
          ? "long-retries"
          : "queue";
/** The rate-limited and long-retries groups' server suggests continue-as-new this early, so a burst of 8 (or a run of retries) hands over. */
const SUGGEST_CONTINUE_AS_NEW_AT = 40;

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const setAt = args.indexOf("--set");
  const set = setAt >= 0 ? args.splice(setAt, 2)[1] : CURRENT_SET;
  if (!set || !/^[\w.-]+$/.test(set)) throw new Error("--set needs a folder name");
  const unknown = args.filter((name) => !scenarios.some((s) => s.name === name));
  if (unknown.length) throw new Error(`unknown scenario ${unknown.join(", ")}`);
  const chosen = scenarios.filter((s) => args.length === 0 || args.includes(s.name));
  const dir = fromRoot("test", "histories", set);
  await mkdir(dir, { recursive: true });
  const receiver = await new Receiver().start();
  try {
    for (const group of ["queue", "local", "local-first", "rate-limited", "long-retries"] as const) {
      const members = chosen.filter((s) => groupOf(s) === group);
      if (members.length) await record(members, group, receiver, dir);
    }
  } finally {
    await receiver.stop();
    await stopTestTemporal();
  }
}

async function record(group: Scenario[], kind: Group, receiver: Receiver, dir: string): Promise<void> {
  let ratelimit: RateLimitUnderTest | undefined;
  let server: DevServer | undefined;
  if (kind === "rate-limited") ratelimit = await startRateLimitService(perConfigPerSecond(1));
  if (kind === "rate-limited" || kind === "long-retries") {
    server = await startDevServer({
      searchAttributes: searchAttributeCliArgs(),
      port: await freePort(),
      headless: true,
      logFile: path.join(await mkdtemp(path.join(tmpdir(), "etp-record-")), "server.log"),
      dynamicConfig: { "limit.historyCount.suggestContinueAsNew": String(SUGGEST_CONTINUE_AS_NEW_AT) },
    });
  }
  const env = await new DeliveryEnv().start(
    [
      "--max-attempts",
      kind === "long-retries" ? "10" : "4",
      "--retry-period",
      "300ms",
      "--reconcile-grace",
      "1s",
      // Every group but local-first records the send mode it is named for (queue otherwise).
      ...["--send-mode", kind === "local" || kind === "local-first" ? kind : "queue"],
      ...(kind === "local-first" ? ["--local-send-budget", "1s"] : []),
      ...(ratelimit ? ["--ratelimit-addr", ratelimit.grpcAddress] : []),
    ],
    server?.address,
  );
  const db = new pg.Client({ connectionString: env.api.db.url });
  await db.connect();
  try {
    for (const s of group) {
      const type = s.name.replace(/-/g, "_");
      const config = await env.createConfig({ endpoint: receiver.url, eventTypes: [`ledger.${type}`] });
      let calls = 0;
      receiver.respond = (_req, res) => {
        const [status, headers, delayMs] = s.respond(++calls);
        setTimeout(() => res.writeHead(status, headers).end(), delayMs ?? 0);
      };
      const events = Array.from({ length: s.rateLimitedBurst ?? 1 }, (_, i) =>
        env.event({ type, idempotency_key: `history-${s.name}${i ? `-${i}` : ""}` }),
      );
      for (const event of events) await env.publish(event);
      let workflowIds = events.map((e) => env.workflowId(config.id, e.idempotency_key));
      if (s.after && s.after !== "replay") await act(s.after, env, db, config.id, workflowIds[0]!);
      const results = [];
      for (const event of events) {
        results.push(
          await env.result(config.id, event.idempotency_key, 60_000).catch((err: Error) => ({ err })),
        );
      }
      if (s.after === "replay") {
        const r = await env.api.call("POST", `/webhooks/${results[0].webhookId}/replay`, undefined, {
          "idempotency-key": "history",
        });
        workflowIds = [r.body.data.workflowID];
        await env.temporal.workflow.getHandle(workflowIds[0]!).result();
      }
      const history = await pick(env, workflowIds, s.run);
      const file = path.join(dir, `${s.name}.json`);
      await writeFile(file, `${historyToJSON(history)}\n`);
      process.stderr.write(
        `recorded ${path.relative(fromRoot(), file)} (${history.events?.length} events)\n`,
      );
    }
  } finally {
    await db.end();
    await env.stop();
    await ratelimit?.stop();
    await server?.stop();
  }
}

/** Does what the scenario's `after` says once the delivery's first attempt row exists. */
async function act(after: After, env: DeliveryEnv, db: pg.Client, configId: string, workflowId: string) {
  for (let i = 0; (await env.attempts(configId)).length === 0; i++) {
    if (i > 300) throw new Error("no first attempt");
    await new Promise((r) => setTimeout(r, 100));
  }
  const handle = env.temporal.workflow.getHandle(workflowId);
  if (after === "deactivate" || after === "reactivate") {
    await env.api.call("PUT", `/configs/${configId}/deactivate`);
    if (after === "reactivate") await env.api.call("PUT", `/configs/${configId}/activate`);
  } else if (after === "cancel") {
    const webhookId = (await env.attempts(configId))[0]!.webhook_id;
    await env.api.call("POST", `/webhooks/${webhookId}/cancel`);
  } else if (after === "close-row") {
    await db.query(
      "UPDATE attempts SET status = 'failed', error = 'closed by an operator' WHERE config_id = $1",
      [configId],
    );
  } else if (after === "lose-workflow") {
    // As if Temporal lost it: reconciliation restarts the delivery under the same id.
    const { runId } = await handle.describe();
    await env.temporal.workflowService.deleteWorkflowExecution({
      namespace: "default",
      workflowExecution: { workflowId, runId },
    });
    for (let i = 0; ; i++) {
      const current = await handle.describe().catch(() => undefined);
      if (current && current.runId !== runId) return;
      if (i > 600) throw new Error("the lost workflow was not restarted");
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** The history to keep: the longest of a burst, or its first or last run when it continued as new. */
async function pick(env: DeliveryEnv, workflowIds: string[], run?: "first" | "last") {
  const histories: temporal.api.history.v1.IHistory[] = [];
  for (const id of workflowIds) {
    const runs = [];
    for await (const r of env.temporal.workflow.list({ query: `WorkflowId = "${id}"` })) runs.push(r);
    runs.sort((a, b) => a.startTime.getTime() - b.startTime.getTime());
    if (run && runs.length < 2) continue;
    const chosen = run === "first" ? runs[0]! : runs.at(-1)!;
    histories.push(await env.temporal.workflow.getHandle(id, run ? chosen.runId : undefined).fetchHistory());
  }
  if (histories.length === 0) throw new Error("no delivery of the burst continued as new");
  return histories.reduce((a, b) => ((b.events?.length ?? 0) > (a.events?.length ?? 0) ? b : a));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
