import { writeFile } from "node:fs/promises";
import path from "node:path";
import { historyToJSON } from "@temporalio/common/lib/proto-utils.js";
import { fromRoot } from "../../common/paths.js";
import { DeliveryEnv } from "../support/delivery-env.js";
import { Receiver } from "../support/receiver.js";
import { stopTestTemporal } from "../support/temporal.js";

// Re-records the delivery workflow histories replayed by
// test/webhooks/replay-histories.test.ts, from real runs against a Temporal
// dev server. Run after an intended workflow change:
//   npm run build && node dist/test/histories/record.js [scenario …]
// (all scenarios when none is named).

type Respond = (calls: number) => [number, Record<string, string>?];

interface Scenario {
  name: string;
  respond: Respond;
  after?: "deactivate" | "replay";
  /** Recorded with `--send-mode local` (sends as local activities). */
  local?: true;
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
];

async function main(): Promise<void> {
  const only = process.argv.slice(2);
  const chosen = scenarios.filter((s) => only.length === 0 || only.includes(s.name));
  const unknown = only.filter((name) => !scenarios.some((s) => s.name === name));
  if (unknown.length) throw new Error(`unknown scenario ${unknown.join(", ")}`);
  const receiver = await new Receiver().start();
  try {
    for (const local of [false, true]) {
      const group = chosen.filter((s) => Boolean(s.local) === local);
      if (group.length) await record(group, local, receiver);
    }
  } finally {
    await receiver.stop();
    await stopTestTemporal();
  }
}

async function record(group: Scenario[], local: boolean, receiver: Receiver): Promise<void> {
  const env = await new DeliveryEnv().start([
    "--max-attempts",
    "4",
    ...(local ? ["--send-mode", "local"] : []),
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
      const event = env.event({ type, idempotency_key: `history-${s.name}` });
      await env.publish(event);
      let workflowId = env.workflowId(config.id, event.idempotency_key);
      if (s.after === "deactivate") {
        await receiver.waitFor(receiver.requests.length + 1);
        await env.api.call("PUT", `/configs/${config.id}/deactivate`);
      }
      const result = await env.result(config.id, event.idempotency_key);
      if (s.after === "replay") {
        const r = await env.api.call("POST", `/webhooks/${result.webhookId}/replay`, undefined, {
          "idempotency-key": "history",
        });
        workflowId = r.body.data.workflowID;
        await env.temporal.workflow.getHandle(workflowId).result();
      }
      const history = await env.temporal.workflow.getHandle(workflowId).fetchHistory();
      const file = fromRoot("test", "histories", `${s.name}.json`);
      await writeFile(file, `${historyToJSON(history)}\n`);
      process.stderr.write(`recorded ${path.basename(file)} (${history.events?.length} events)\n`);
    }
  } finally {
    await env.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
