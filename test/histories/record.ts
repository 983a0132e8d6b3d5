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
//   npm run build && node dist/test/histories/record.js

type Respond = (calls: number) => [number, Record<string, string>?];

const scenarios: { name: string; respond: Respond; after?: "deactivate" | "replay" }[] = [
  { name: "success", respond: () => [200] },
  { name: "retries-then-success", respond: (n) => [n <= 2 ? 500 : 200] },
  { name: "permanent-failure", respond: () => [410] },
  { name: "cap-reached", respond: () => [503] },
  { name: "config-deactivated", respond: () => [500], after: "deactivate" },
  { name: "server-requested-delay", respond: (n) => (n === 1 ? [429, { "retry-after": "1" }] : [200]) },
  { name: "replay", respond: () => [200], after: "replay" },
];

async function main(): Promise<void> {
  const env = await new DeliveryEnv().start(["--max-attempts", "4"]);
  const receiver = await new Receiver().start();
  try {
    for (const s of scenarios) {
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
    await receiver.stop();
    await env.stop();
    await stopTestTemporal();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
