import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { historyToJSON } from "@temporalio/common/lib/proto-utils.js";
import { fromRoot } from "../../common/paths.js";
import { orderedWorkflowId } from "../../core/ordering.js";
import { DeliveryEnv } from "../support/delivery-env.js";
import { type ORDERED_SCENARIOS, ORDERED_SET } from "../support/history-sets.js";
import { Receiver } from "../support/receiver.js";
import { stopTestTemporal } from "../support/temporal.js";

// Records the ordered-delivery workflow's histories (workflows/ordered-delivery.ts) from
// real runs into test/histories/<ORDERED_SET>/; test/webhooks/replay-histories.test.ts
// replays them with every other set.
//   npm run build && node dist/test/histories/record-ordered.js [scenario …]

type Answer = (seq: number, calls: number) => number;
type Act = "skip" | "replay-head" | "deactivate" | "cancel-head";

interface Scenario {
  name: (typeof ORDERED_SCENARIOS)[number];
  onFailure: "skip" | "block";
  answer: Answer;
  /** Done once the head's first attempt is in. */
  act?: Act;
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

const wait = async (what: string, ok: () => Promise<boolean> | boolean) => {
  for (let i = 0; !(await ok()); i++) {
    if (i > 600) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
};

async function main(): Promise<void> {
  const chosen = scenarios.filter((s) => process.argv.length < 3 || process.argv.slice(2).includes(s.name));
  const dir = fromRoot("test", "histories", ORDERED_SET);
  await mkdir(dir, { recursive: true });
  const receiver = await new Receiver().start();
  const env = await new DeliveryEnv().start(["--max-attempts", "4", "--send-mode", "queue"]);
  try {
    for (const s of chosen) {
      const type = s.name.replace(/-/g, "_");
      const config = await env.createConfig({
        endpoint: receiver.url,
        eventTypes: [`ledger.${type}`],
        ordering: { enabled: true, onFailure: s.onFailure },
      });
      const calls = new Map<number, number>();
      const delivered: number[] = [];
      receiver.respond = (r, res) => {
        const { seq } = JSON.parse(r.body).payload as { seq: number };
        calls.set(seq, (calls.get(seq) ?? 0) + 1);
        const status = s.answer(seq, calls.get(seq)!);
        if (status === 200) delivered.push(seq);
        res.writeHead(status, status === 503 ? { "retry-after": "30" } : {}).end();
      };
      const webhookIds: string[] = [];
      for (let seq = 1; seq <= 3; seq++) {
        const r = await env.api.call(
          "POST",
          "/events",
          env.event({ type, idempotency_key: `${s.name}-${seq}`, ordering_key: "k", payload: { seq } }),
        );
        webhookIds.push(r.body.data.deliveries[0].webhookID);
      }
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
      const expected =
        s.act === "deactivate" ? 0 : s.act === "replay-head" ? 3 : 2 + (s.answer(1, 9) === 200 ? 1 : 0);
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
    }
  } finally {
    await env.stop();
    await receiver.stop();
    await stopTestTemporal();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
