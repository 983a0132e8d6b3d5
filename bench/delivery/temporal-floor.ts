import { mkdir, writeFile } from "node:fs/promises";
import { Client } from "@temporalio/client";
import { type InjectedSinks, NativeConnection, Runtime, Worker } from "@temporalio/worker";
import { fromRoot } from "../../common/paths.js";
import { stopTestTemporal, testTemporal } from "../../test/support/temporal.js";
import {
  WebhookAttemptCount,
  WebhookConfigId,
  WebhookDeliveryStatus,
  WebhookEndpointHost,
  WebhookEventType,
  WebhookId,
} from "../../workflows/search-attributes.js";
import { CpuMeter } from "../support/cpu-by-process.js";
import { IO_EVENT_TYPE, openDeliveryIo } from "./delivery-io.js";
import type { FloorActivities, FloorSinks } from "./floor-workflows.js";

// bench/delivery/temporal-floor: the ceiling Temporal puts on deliveries here.
// Workflows shaped like a delivery (six search attributes at start, one activity,
// an upsert at the end) whose activity does nothing, against the same dev server
// as the delivery bench; CPU per workflow is read from /proc, so the ceiling
// (2 cores / CPU per workflow) holds whatever else the machine runs. The last two
// variants add a delivery's database and HTTP work (delivery-io.ts): the consumer's
// query before each start, and a real send as the activity (config read, signed POST
// to a verifying receiver in this process, attempt row). What they lose against the
// plain floor is that work's share; what deliveries lose beyond it is the broker, the
// consumer and the delivery workflow's own code.
// Usage: node dist/bench/delivery/temporal-floor.js [workflows-per-variant] [variant indexes, e.g. 3,6,7,3,6,7]
// (TEST_TEMPORAL=server: on the production Temporal server instead of the dev server)

const N = Number(process.argv[2] ?? 400);
const CONCURRENCY = 32;

async function main(): Promise<void> {
  Runtime.install({
    logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} } as never,
  });
  const server = await testTemporal();
  const serverPids = await server.pids();
  const connection = await NativeConnection.connect({ address: server.address });
  const workflowsPath = new URL("./floor-workflows.js", import.meta.url).pathname;
  const io = await openDeliveryIo();
  const activities: FloorActivities = {
    noop: async () => "ok",
    send: (input, local) => io.send(input.configId, input.body, input.idempotencyKey, local),
  };
  // Workflow id → what its finishing resolves (the workflow's sink, in this process).
  const finishing = new Map<string, () => void>();
  const sinks: InjectedSinks<FloorSinks> = {
    floor: {
      finished: {
        fn: (info) => {
          finishing.get(info.workflowId)?.();
          finishing.delete(info.workflowId);
        },
      },
    },
  };
  const workers = await Promise.all(
    ["floor", "floor-sends"].map((taskQueue) =>
      Worker.create({
        connection,
        taskQueue,
        workflowsPath,
        activities,
        sinks,
        maxConcurrentWorkflowTaskExecutions: 100,
        maxConcurrentActivityTaskExecutions: 200,
      }),
    ),
  );
  const running = Promise.all(workers.map((w) => w.run()));
  // A client on the worker's own connection can ask for eager workflow start.
  const client = new Client({ connection });
  // PostgreSQL too: the production server keeps its state there (the dev server in memory).
  const cpu = new CpuMeter((pid, comm) =>
    serverPids.includes(pid)
      ? "server"
      : pid === process.pid
        ? "worker"
        : comm === "postgres"
          ? "postgres"
          : undefined,
  );

  const allVariants = [
    { name: "activity on a second queue (as deliveries)", workflow: "floorRemote", eager: false },
    { name: "same, eager workflow start", workflow: "floorRemote", eager: true },
    { name: "local activity", workflow: "floorLocal", eager: false },
    { name: "local activity, eager workflow start", workflow: "floorLocal", eager: true },
    {
      name: "same shape as deliveries in queue mode, with a delivery's I/O",
      workflow: "floorRemote",
      eager: true,
      io: true,
    },
    {
      name: "same shape as deliveries in local mode, with a delivery's I/O",
      workflow: "floorLocal",
      eager: true,
      io: true,
    },
    // What the Web UI's view of a delivery costs Temporal: the final upsert, then every
    // search attribute (the floor's own shape otherwise, eager and local).
    { name: "local eager, without the final upsert", workflow: "floorLocalNoUpsert", eager: true },
    {
      name: "local eager, no search attributes at all",
      workflow: "floorLocalNoUpsert",
      eager: true,
      bare: true,
    },
  ];
  // An optional list of variant indexes runs just those, in that order (repeat them to
  // interleave: the dev server slows as its in-memory history grows, so order matters).
  const picked = process.argv[3]?.split(",").map(Number);
  const variants = picked ? picked.map((i) => allVariants[i]!) : allVariants;
  /** The consumer's query for an event, and the send of its one config (the event in its input). */
  const ioSend = async (workflowId: string) => {
    const [config] = await io.matchConfigs(IO_EVENT_TYPE);
    const idempotencyKey = `floor-${workflowId}`;
    const body = JSON.stringify({
      idempotency_key: idempotencyKey,
      date: new Date().toISOString(),
      app: "bench",
      version: "v1",
      type: IO_EVENT_TYPE,
      payload: { run: workflowId, sentAt: Date.now() },
    });
    return { configId: config!.id, body, idempotencyKey };
  };
  const rows = [];
  for (const v of variants) {
    const tag = `${v.workflow}-${v.eager}-${Date.now()}`;
    let next = 0;
    cpu.start();
    const started = Date.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < N) {
          const i = next++;
          const workflowId = `${tag}-${i}`;
          // Set before the start: an eager start may run the whole workflow before it returns.
          const finished = new Promise<void>((resolve) => finishing.set(workflowId, resolve));
          // As the consumer does for each event: the configs it goes to, then one start each.
          const send = v.io ? await ioSend(workflowId) : undefined;
          const sendArgs = send ? [send] : [];
          await client.workflow.start(v.workflow, {
            taskQueue: "floor",
            workflowId,
            args: v.workflow === "floorRemote" ? ["floor-sends", ...sendArgs] : sendArgs,
            requestEagerStart: v.eager,
            typedSearchAttributes: v.bare
              ? []
              : [
                  { key: WebhookConfigId, value: "config" },
                  { key: WebhookId, value: `${tag}-${i}` },
                  { key: WebhookEventType, value: "bench.floor" },
                  { key: WebhookEndpointHost, value: "127.0.0.1:1" },
                  { key: WebhookDeliveryStatus, value: "pending" },
                  { key: WebhookAttemptCount, value: 0 },
                ],
          });
          await finished;
        }
      }),
    );
    const seconds = (Date.now() - started) / 1000;
    const used = cpu.delta();
    const serverMs = (used.server ?? 0) / N;
    const workerMs = (used.worker ?? 0) / N;
    const postgresMs = (used.postgres ?? 0) / N;
    rows.push({
      ...v,
      perSecond: N / seconds,
      serverMs,
      workerMs,
      postgresMs,
      ceiling: 2000 / (serverMs + workerMs + postgresMs),
    });
    process.stderr.write(`${v.name}: ${(N / seconds).toFixed(0)}/s\n`);
  }

  console.log(
    `\nTemporal floor: ${N} workflows per variant (no-op activity unless with a delivery's I/O), ${CONCURRENCY} at a time\n`,
  );
  const serverLabel = process.env.TEST_TEMPORAL === "server" ? "Temporal server" : "dev server";
  console.log(
    `| variant | workflows/s | ${serverLabel} CPU ms/wf | worker+client CPU ms/wf | PostgreSQL CPU ms/wf | 2-core ceiling/s |`,
  );
  console.log("|---|---:|---:|---:|---:|---:|");
  for (const r of rows) {
    console.log(
      `| ${r.name} | ${r.perSecond.toFixed(0)} | ${r.serverMs.toFixed(1)} | ${r.workerMs.toFixed(1)} | ${r.postgresMs.toFixed(1)} | ${r.ceiling.toFixed(0)} |`,
    );
  }
  if (!picked) {
    console.log(
      `\nratio of the eager local variant to the delivery shape: ${(rows[3]!.perSecond / rows[0]!.perSecond).toFixed(2)}`,
    );
    console.log(
      `with a delivery's I/O, against the same shape without: queue ${(rows[4]!.perSecond / rows[1]!.perSecond).toFixed(2)}, local ${(rows[5]!.perSecond / rows[3]!.perSecond).toFixed(2)} (bad signatures: ${io.badSignatures()}, POSTs received: ${io.received()})`,
    );
  }
  await mkdir(fromRoot("bench", "results"), { recursive: true });
  const suffix = process.env.TEST_TEMPORAL === "server" ? "-server" : "";
  const out = fromRoot("bench", "results", `delivery-temporal-floor${suffix}.json`);
  await writeFile(
    out,
    `${JSON.stringify({ date: new Date().toISOString(), workflows: N, rows }, null, 2)}\n`,
  );
  console.log(`wrote ${out}`);

  for (const w of workers) w.shutdown();
  await running;
  await connection.close();
  await io.close();
  await stopTestTemporal();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
