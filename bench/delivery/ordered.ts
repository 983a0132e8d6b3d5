import { mkdirSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Client, Connection } from "@temporalio/client";
import { connect } from "nats";
import { fromRoot } from "../../common/paths.js";
import { orderedWorkflowId } from "../../core/ordering.js";
import { stopTestTemporal, testTemporal } from "../../test/support/temporal.js";
import { startWebhooks } from "../../test/support/webhooks-server.js";
import { CpuMeter } from "../support/cpu-by-process.js";
import { type HistoryShape, historyShape } from "./history-shape.js";

// bench/delivery/ordered: ordered delivery (docs/webhooks/ordering-and-batching.md#ordered-delivery) against unordered
// delivery of the same events in the same run: events/s (first publish to last arrival) and
// p99 latency (publish to arrival) for an unordered config, then ordered configs whose
// events spread over 1, 10 and 100 ordering keys. Each scenario has its own config and
// event type; events are published on NATS at full speed, one scenario after the other.
// CPU per event by process (from /proc, robust to a noisy machine where events/s is not)
// and the mean history shape of a delivery and, per ordered event, of its key's workflow
// (an ordered event's delivery workflow counts as none when the key's workflow ended it).
// Usage: node dist/bench/delivery/ordered.js [events per scenario] [key counts, e.g. 0,100]
// (0 is unordered; default 0,1,10,100).

const EVENTS = Number(process.argv[2] ?? 400);
const KEYS = (process.argv[3] ?? "0,1,10,100").split(",").map(Number);
const SHAPE_SAMPLE = 20;

interface Row {
  scenario: string;
  events: number;
  seconds: number;
  eventsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  cpuMsPerEvent: Record<string, number>;
  /** A delivery workflow's mean shape (a sample). */
  delivery?: HistoryShape;
  /** The key workflows' shape divided by the events each ran (ordered only). */
  queuePerEvent?: HistoryShape;
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

async function main() {
  const arrived = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const ik = (JSON.parse(Buffer.concat(chunks).toString()) as { idempotency_key: string })
        .idempotency_key;
      if (!arrived.has(ik)) arrived.set(ik, Date.now());
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  const topic = `bench-ordered-${Date.now()}`;
  const stream = `BENCHO_${Date.now()}`;
  const api = await startWebhooks({
    worker: true,
    args: ["--broker-topics", topic, "--nats-stream", stream, "--audit-topic", "", "--log-level", "warn"],
  });
  const temporalPids = await (await testTemporal()).pids();
  const pid = api.process.child.pid;
  const nats = await connect({ servers: "nats://127.0.0.1:4222" });
  const js = nats.jetstream();
  const rows: Row[] = [];
  try {
    for (const [run, keys] of KEYS.entries()) {
      const scenario = keys === 0 ? "unordered" : `ordered, ${keys} key${keys === 1 ? "" : "s"}`;
      // Its own event type and idempotency keys when a scenario repeats in one run.
      const type = `${scenario.replace(/\W+/g, "_")}_${run}`;
      const created = await api.call("POST", "/configs", {
        endpoint,
        eventTypes: [`bench.${type}`],
        ...(keys ? { ordering: { enabled: true } } : {}),
      });
      if (created.status !== 200) throw new Error(created.text);
      const configId = (created.body as { data: { id: string } }).data.id;
      const cpu = new CpuMeter((p, comm) => {
        if (p === pid) return "webhooks";
        if (temporalPids.includes(p)) return "Temporal";
        if (comm === "postgres") return "PostgreSQL";
        if (comm === "nats-server") return "NATS";
        return undefined;
      });
      cpu.start();
      const published = new Map<string, number>();
      const sends: Promise<unknown>[] = [];
      for (let i = 0; i < EVENTS; i++) {
        const ik = `${type}-${i}`;
        published.set(ik, Date.now());
        const event = {
          idempotency_key: ik,
          app: "bench",
          type,
          payload: { i },
          ...(keys ? { ordering_key: `k${i % keys}` } : {}),
        };
        sends.push(js.publish(topic, JSON.stringify(event)));
      }
      await Promise.all(sends);
      const first = Math.min(...published.values());
      while ([...published.keys()].some((ik) => !arrived.has(ik)))
        await new Promise((r) => setTimeout(r, 50));
      const cpuMs = cpu.delta();
      const connection = await Connection.connect({ address: api.temporalAddress });
      const client = new Client({ connection });
      const delivery = await historyShape(
        client,
        Array.from({ length: Math.min(SHAPE_SAMPLE, EVENTS) }, (_, i) => `delivery:${configId}:${type}-${i}`),
        // An ordered event whose first send ended it has no delivery workflow (its key's sent it).
        keys > 0,
      );
      let queuePerEvent: HistoryShape | undefined;
      if (keys) {
        const sampled = Math.min(keys, SHAPE_SAMPLE);
        // Every run of each sampled key's workflow: a key that continued as new has several.
        const runs: { workflowId: string; runId: string }[] = [];
        for (let k = 0; k < sampled; k++) {
          const workflowId = orderedWorkflowId(configId, `k${k}`);
          for await (const w of client.workflow.list({ query: `WorkflowId = "${workflowId}"` }))
            runs.push({ workflowId, runId: w.runId });
        }
        const perRun = await historyShape(client, runs);
        // The sampled keys' runs together, over the events those keys carried.
        const events = (sampled * EVENTS) / keys;
        queuePerEvent = Object.fromEntries(
          Object.entries(perRun).map(([k, v]) => [k, Number(((v * runs.length) / events).toFixed(2))]),
        ) as unknown as HistoryShape;
      }
      await connection.close();
      const latencies = [...published].map(([ik, at]) => arrived.get(ik)! - at).sort((a, b) => a - b);
      const seconds = (Math.max(...[...published.keys()].map((ik) => arrived.get(ik)!)) - first) / 1000;
      rows.push({
        scenario,
        events: EVENTS,
        seconds,
        eventsPerSecond: Math.round(EVENTS / seconds),
        p50Ms: percentile(latencies, 50),
        p99Ms: percentile(latencies, 99),
        cpuMsPerEvent: Object.fromEntries(
          Object.entries(cpuMs).map(([k, v]) => [k, Number((v / EVENTS).toFixed(2))]),
        ),
        delivery,
        ...(queuePerEvent ? { queuePerEvent } : {}),
      });
      console.error(`${scenario}: ${JSON.stringify(rows.at(-1))}`);
    }
  } finally {
    // The server sets aside each stream's max bytes: a stream left behind fills its storage.
    await (await nats.jetstreamManager()).streams.delete(stream).catch(() => {});
    await nats.close();
    await api.stop();
    await stopTestTemporal();
    server.close();
  }
  console.log(
    "| scenario | events | seconds | events/s | p50 ms | p99 ms | CPU ms/event (webhooks / Temporal / PostgreSQL) | workflow tasks/event (delivery + key) | delivery workflows/event |\n|---|---|---|---|---|---|---|---|---|",
  );
  for (const r of rows) {
    const c = r.cpuMsPerEvent;
    const tasks = `${r.delivery?.workflowTasks ?? 0} + ${r.queuePerEvent?.workflowTasks ?? 0}`;
    console.log(
      `| ${r.scenario} | ${r.events} | ${r.seconds.toFixed(1)} | ${r.eventsPerSecond} | ${r.p50Ms} | ${r.p99Ms} | ${c.webhooks ?? 0} / ${c.Temporal ?? 0} / ${c.PostgreSQL ?? 0} | ${tasks} | ${r.delivery?.workflows ?? 1} |`,
    );
  }
  mkdirSync(fromRoot("bench", "results"), { recursive: true });
  const file = fromRoot("bench", "results", "delivery-ordered.json");
  writeFileSync(
    file,
    `${JSON.stringify({ date: new Date().toISOString(), events: EVENTS, rows }, null, 2)}\n`,
  );
  console.log(`\nresults written to ${file}`);
  process.exit(0);
}

main().catch((err: Error) => {
  console.error(err.stack ?? err.message);
  process.exit(1);
});
