import http from "node:http";
import type { AddressInfo } from "node:net";
import { Client, Connection } from "@temporalio/client";
import { historyToJSON } from "@temporalio/common/lib/proto-utils.js";
import { batchCollectorId } from "../../core/batching.js";
import { stopTestTemporal, testTemporal } from "../../test/support/temporal.js";
import { startWebhooks } from "../../test/support/webhooks-server.js";
import { CpuMeter } from "../support/cpu-by-process.js";
import { writeResults } from "../support/results.js";

// bench/delivery/batched: batched delivery (docs/webhooks/ordering-and-batching.md#batched-delivery) against unbatched
// delivery of the same events in the same run: events/s from the first publish to the last
// event's arrival, and the POSTs the receiver got. Each scenario has its own config and
// event type; events are posted to POST /events, 32 requests at a time, one scenario after the
// other. CPU ms per event of each process group say where the time goes on this shared machine.
// Usage: node dist/bench/delivery/batched.js [events per scenario] [only scenarios whose name has this]

const EVENTS = Number(process.argv[2] ?? 2000);
const ONLY = process.argv[3];
/** Concurrent POST /events requests. */
const POSTERS = 32;
const SCENARIOS = (
  [
    ["unbatched", null],
    ["batched (50, 200 ms)", { maxEvents: 50, maxWaitMs: 200 }],
    // The acceptance floor: POST /events for events no config subscribes to (parsing,
    // matching, the answer), nothing stored or started; "seconds" is its acceptance.
    ["no subscriber", "none"],
  ] as const
).filter(([name]) => !ONLY || name.startsWith(ONLY));

async function main() {
  /** Arrival time of each event (by idempotency key), and POSTs per scenario. */
  const arrived = new Map<string, number>();
  const posts = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const body = JSON.parse(Buffer.concat(chunks).toString()) as unknown;
      const events = (Array.isArray(body) ? body : [body]) as { idempotency_key: string; type: string }[];
      const now = Date.now();
      for (const e of events) if (!arrived.has(e.idempotency_key)) arrived.set(e.idempotency_key, now);
      // The scenario is the idempotency key's prefix (the delivered type is normalized).
      const scenario = events[0]?.idempotency_key.split("-")[0] ?? "";
      posts.set(scenario, (posts.get(scenario) ?? 0) + 1);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  // Over POST /events: the NATS server's JetStream storage is shared and may be full.
  const api = await startWebhooks({ worker: true, args: ["--audit-topic", "", "--log-level", "warn"] });
  const rows: {
    scenario: string;
    events: number;
    posts: number;
    acceptedSeconds: number;
    seconds: number;
    eventsPerSecond: number;
    cpuMsPerEvent: Record<string, number>;
    collector?: { signals: number; workflowTasks: number };
  }[] = [];
  const temporalPids = await (await testTemporal()).pids();
  const pid = api.process.child.pid;
  try {
    for (const [scenario, batch] of SCENARIOS) {
      const type = scenario.replace(/\W+/g, "_");
      let configId = "";
      if (batch !== "none") {
        const created = await api.call("POST", "/configs", {
          endpoint,
          eventTypes: [`bench.${type}`],
          ...(batch ? { batch } : {}),
        });
        if (created.status !== 200) throw new Error(created.text);
        configId = (created.body as { data: { id: string } }).data.id;
      }
      const iks = Array.from({ length: EVENTS }, (_, i) => `${type}-${i}`);
      const cpu = new CpuMeter((p, comm) => {
        if (p === pid) return "webhooks";
        if (p === process.pid) return "bench";
        if (temporalPids.includes(p)) return "Temporal";
        if (comm === "postgres") return "PostgreSQL";
        return undefined;
      });
      cpu.start();
      const first = Date.now();
      // POSTERS requests at a time, each taking the next event.
      let next = 0;
      await Promise.all(
        Array.from({ length: POSTERS }, async () => {
          for (let i = next++; i < EVENTS; i = next++) {
            const r = await api.call("POST", "/events", {
              idempotency_key: iks[i],
              app: "bench",
              type,
              payload: { i },
            });
            if (r.status !== 202 && !(batch === "none" && r.status === 200)) throw new Error(r.text);
          }
        }),
      );
      const acceptedSeconds = (Date.now() - first) / 1000;
      while (batch !== "none" && iks.some((ik) => !arrived.has(ik)))
        await new Promise((r) => setTimeout(r, 50));
      const seconds =
        batch === "none" ? acceptedSeconds : (Math.max(...iks.map((ik) => arrived.get(ik)!)) - first) / 1000;
      const cpuMs = cpu.delta();
      const collector =
        batch && batch !== "none" ? await collectorShape(api.temporalAddress, configId) : undefined;
      rows.push({
        scenario,
        events: EVENTS,
        posts: posts.get(type) ?? 0,
        acceptedSeconds,
        seconds,
        eventsPerSecond: Math.round(EVENTS / seconds),
        ...(collector ? { collector } : {}),
        cpuMsPerEvent: Object.fromEntries(
          Object.entries(cpuMs).map(([k, v]) => [k, Number((v / EVENTS).toFixed(2))]),
        ),
      });
      console.error(`${scenario}: done`);
    }
  } finally {
    await api.stop();
    await stopTestTemporal();
    server.close();
  }
  // "accepted": until every POST /events was answered; "seconds": until the last event arrived.
  console.log(
    "| scenario | events | POSTs | accepted s | seconds | events/s | CPU ms/event (webhooks / Temporal / PostgreSQL / bench) |\n|---|---|---|---|---|---|---|",
  );
  for (const r of rows) {
    const c = r.cpuMsPerEvent;
    console.log(
      `| ${r.scenario} | ${r.events} | ${r.posts} | ${r.acceptedSeconds.toFixed(1)} | ${r.seconds.toFixed(1)} | ${r.eventsPerSecond} | ${c.webhooks ?? 0} / ${c.Temporal ?? 0} / ${c.PostgreSQL ?? 0} / ${c.bench ?? 0} |`,
    );
  }
  for (const r of rows)
    if (r.collector)
      console.log(
        `\n${r.scenario}: the collector got ${r.collector.signals} signals (${(r.events / r.collector.signals).toFixed(1)} events each) in ${r.collector.workflowTasks} workflow tasks`,
      );
  const plain = rows.find((r) => r.scenario === "unbatched");
  const batched = rows.find((r) => r.scenario.startsWith("batched"));
  if (plain && batched)
    console.log(`\nbatched / unbatched: ${(batched.eventsPerSecond / plain.eventsPerSecond).toFixed(1)}x`);
  writeResults("delivery-batched", { events: EVENTS, rows });
  process.exit(0);
}

/** Signals and workflow tasks of every run of the config's collector. */
async function collectorShape(address: string, configId: string) {
  const connection = await Connection.connect({ address });
  try {
    const client = new Client({ connection });
    const id = batchCollectorId(configId);
    const shape = { signals: 0, workflowTasks: 0 };
    for await (const run of client.workflow.list({ query: `WorkflowId = "${id}"` })) {
      const history = JSON.parse(
        historyToJSON(await client.workflow.getHandle(id, run.runId).fetchHistory()),
      );
      const types = (history as { events: { eventType: string }[] }).events.map((e) => e.eventType);
      shape.signals += types.filter((t) => t.endsWith("WORKFLOW_EXECUTION_SIGNALED")).length;
      shape.workflowTasks += types.filter((t) => t.endsWith("WORKFLOW_TASK_COMPLETED")).length;
    }
    return shape;
  } finally {
    await connection.close();
  }
}

main().catch((err: Error) => {
  console.error(err.stack ?? err.message);
  process.exit(1);
});
