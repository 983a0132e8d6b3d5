import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { historyToJSON } from "@temporalio/common/lib/proto-utils.js";
import { fromRoot } from "../../common/paths.js";
import { DeliveryEnv } from "../support/delivery-env.js";
import { CURRENT_SET } from "../support/history-sets.js";
import {
  perConfigPerSecond,
  type RateLimitUnderTest,
  startRateLimitService,
} from "../support/ratelimit-service.js";
import { Receiver } from "../support/receiver.js";
import { stopTestTemporal } from "../support/temporal.js";

// Records the delivery workflow histories replayed by
// test/webhooks/replay-histories.test.ts, from real runs against a Temporal
// dev server, into test/histories/<set>/. Sets recorded from earlier workflow
// revisions are kept: running deliveries of those revisions must still replay.
//   npm run record-histories -- [--set NAME] [scenario …]
// (all scenarios into CURRENT_SET when nothing is named).

type Respond = (calls: number) => [number, Record<string, string>?];

interface Scenario {
  name: string;
  respond: Respond;
  after?: "deactivate" | "replay";
  /** Recorded with `--send-mode local` (sends as local activities). */
  local?: true;
  /** Recorded through the rate limit service, one send a second per config; this many events at once. */
  rateLimitedBurst?: number;
}

const scenarios: Scenario[] = [
  { name: "success", respond: () => [200] },
  { name: "retries-then-success", respond: (n) => [n <= 2 ? 500 : 200] },
  { name: "permanent-failure", respond: () => [410] },
  { name: "cap-reached", respond: () => [503] },
  { name: "config-deactivated", respond: () => [500], after: "deactivate" },
  { name: "server-requested-delay", respond: (n) => (n === 1 ? [429, { "retry-after": "1" }] : [200]) },
  { name: "replay", respond: () => [200], after: "replay" },
  { name: "local-retries-then-success", respond: (n) => [n <= 1 ? 500 : 200], local: true },
  { name: "rate-limit-waits", respond: () => [200], rateLimitedBurst: 3 },
];

type Group = "queue" | "local" | "rate-limited";
const groupOf = (s: Scenario): Group => (s.local ? "local" : s.rateLimitedBurst ? "rate-limited" : "queue");

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
    for (const group of ["queue", "local", "rate-limited"] as const) {
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
  if (kind === "rate-limited") ratelimit = await startRateLimitService(perConfigPerSecond(1));
  const env = await new DeliveryEnv().start([
    "--max-attempts",
    "4",
    ...(kind === "local" ? ["--send-mode", "local"] : []),
    ...(ratelimit ? ["--ratelimit-addr", ratelimit.grpcAddress] : []),
  ]);
  try {
    for (const s of group) {
      const type = s.name.replace(/-/g, "_");
      const config = await env.createConfig({ endpoint: receiver.url, eventTypes: [`ledger.${type}`] });
      let calls = 0;
      receiver.respond = (_req, res) => {
        const [status, headers] = s.respond(++calls);
        res.writeHead(status, headers).end();
      };
      const events = Array.from({ length: s.rateLimitedBurst ?? 1 }, (_, i) =>
        env.event({ type, idempotency_key: `history-${s.name}${i ? `-${i}` : ""}` }),
      );
      for (const event of events) await env.publish(event);
      let workflowIds = events.map((e) => env.workflowId(config.id, e.idempotency_key));
      if (s.after === "deactivate") {
        await receiver.waitFor(receiver.requests.length + 1);
        await env.api.call("PUT", `/configs/${config.id}/deactivate`);
      }
      const results = [];
      for (const event of events) results.push(await env.result(config.id, event.idempotency_key));
      if (s.after === "replay") {
        const r = await env.api.call("POST", `/webhooks/${results[0].webhookId}/replay`, undefined, {
          "idempotency-key": "history",
        });
        workflowIds = [r.body.data.workflowID];
        await env.temporal.workflow.getHandle(workflowIds[0]!).result();
      }
      // Of a burst, the delivery that waited longest: its history has the most events.
      const histories = await Promise.all(
        workflowIds.map((id) => env.temporal.workflow.getHandle(id).fetchHistory()),
      );
      const history = histories.reduce((a, b) => ((b.events?.length ?? 0) > (a.events?.length ?? 0) ? b : a));
      const file = path.join(dir, `${s.name}.json`);
      await writeFile(file, `${historyToJSON(history)}\n`);
      process.stderr.write(
        `recorded ${path.relative(fromRoot(), file)} (${history.events?.length} events)\n`,
      );
    }
  } finally {
    await env.stop();
    await ratelimit?.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
