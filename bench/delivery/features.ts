import { mkdirSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Client, Connection } from "@temporalio/client";
import { connect } from "nats";
import type { DeliveryInput } from "../../activities/delivery-types.js";
import { fromRoot } from "../../common/paths.js";
import { parseEventMessage, webhookIdFor } from "../../core/event-message.js";
import { testTemporal } from "../../test/support/temporal.js";
import { startWebhooks, type WebhooksUnderTest } from "../../test/support/webhooks-server.js";
import { sendQueue } from "../../workers/task-queues.js";
import { deliverWebhook } from "../../workflows/delivery.js";
import { CpuMeter } from "../support/cpu-by-process.js";
import { type HistoryShape, historyShape } from "./history-shape.js";

// bench/delivery/features: what the delivery features cost per delivery, in CPU ms by
// component, against the broker path of the same process as the baseline (same script,
// same machine minutes): events consumed from NATS (baseline), the same events through
// POST /events, the broker path with each payload checked against its type's JSON Schema
// in the event catalog, failed deliveries replayed by a bulk recovery, and the broker path again
// with --tracing (spans to an OTLP sink in this process); then events of 1 KiB and 200 KiB
// carried by reference (the product's path: stored once, the workflow carries the id)
// against the same events carried by value in the workflow input, as deliveries started
// before events were stored by reference (still run by today's workers; started by this
// script, so their consumer work is not in the webhooks column; both through the sends
// queue). The other scenarios run in the default send mode (local-first). CPU comes from
// /proc, so it does not depend on what else runs. A second table gives what Temporal did
// per delivery, from a sample of each scenario's histories (history-shape.ts).
// Usage: node dist/bench/delivery/features.js [events]

const EVENTS = Number(process.argv[2] ?? 400);

interface Row {
  scenario: string;
  deliveries: number;
  seconds: number;
  cpuMsPerDelivery: Record<string, number>;
  /** Per delivery, from a sample of its histories (JSON, as the Web UI downloads them). */
  shape?: HistoryShape;
}

/** Deliveries whose histories are read for the shape of each scenario. */
const SHAPE_SAMPLE = 20;

/** A receiver that answers `status()` and counts requests per idempotency-key prefix. */
async function receiver(status: () => number) {
  let count = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      count++;
      res.writeHead(status()).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    count: () => count,
    close: () => server.close(),
  };
}

/** An OTLP/HTTP endpoint that accepts and drops span batches. */
async function otlpSink() {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => res.writeHead(200, { "content-type": "application/x-protobuf" }).end());
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}

async function until(what: string, fn: () => boolean | Promise<boolean>, ms = 300_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const event = (type: string, key: string, blobBytes = 0, tenant?: string) => ({
  idempotency_key: key,
  date: new Date().toISOString(),
  app: "bench",
  version: "v1",
  type,
  payload: blobBytes ? { amount: 42, blob: "x".repeat(blobBytes) } : { amount: 42 },
  ...(tenant ? { tenant } : {}),
});

/** The schema of the event catalog's scenario: the bench events' payload passes it. */
const BENCH_SCHEMA = {
  type: "object",
  required: ["amount"],
  properties: { amount: { type: "number", minimum: 0 }, blob: { type: "string" } },
};

/** Event sizes of the by-reference scenarios (payload bytes; the envelope adds ~150). */
const SIZES = [
  ["1 KiB", 1024],
  ["200 KiB", 200 * 1024],
] as const;

async function main(): Promise<void> {
  const temporalPids = await (await testTemporal()).pids();
  const sink = await otlpSink();
  let failing = false;
  const hook = await receiver(() => (failing ? 400 : 200));
  const nc = await connect({ servers: "nats://127.0.0.1:4222" });
  const rows: Row[] = [];

  const start = (topic: string, extra: string[]) =>
    startWebhooks({
      worker: true,
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url },
      args: [
        "--broker-topics",
        topic,
        "--nats-stream",
        `BENCHF_${Date.now()}`,
        "--audit-topic",
        "",
        "--log-level",
        "warn",
        "--recovery-rate",
        "1000",
        ...extra,
      ],
    });

  /** The workflow ids of the first SHAPE_SAMPLE deliveries of `prefix` to `configId`. */
  const sample = (configId: string, prefix: string) =>
    Array.from({ length: Math.min(SHAPE_SAMPLE, EVENTS) }, (_, i) => `delivery:${configId}:${prefix}-${i}`);
  const measure = async (
    api: WebhooksUnderTest,
    scenario: string,
    run: () => Promise<void>,
    shapeOf?: string[],
  ) => {
    const pid = api.process.child.pid;
    const cpu = new CpuMeter((p, comm) => {
      if (p === pid) return "webhooks (API + worker)";
      if (temporalPids.includes(p)) return "Temporal";
      if (comm === "postgres") return "PostgreSQL";
      if (comm === "nats-server") return "NATS";
      return undefined;
    });
    const before = hook.count();
    const t0 = performance.now();
    cpu.start();
    await run();
    await until(`${scenario}: ${EVENTS} deliveries`, () => hook.count() - before >= EVENTS);
    const ms = cpu.delta();
    const row: Row = {
      scenario,
      deliveries: EVENTS,
      seconds: Number(((performance.now() - t0) / 1000).toFixed(1)),
      cpuMsPerDelivery: Object.fromEntries(
        Object.entries(ms).map(([k, v]) => [k, Number((v / EVENTS).toFixed(2))]),
      ),
    };
    if (shapeOf) {
      const connection = await Connection.connect({ address: api.temporalAddress });
      row.shape = await historyShape(new Client({ connection }), shapeOf);
      await connection.close();
    }
    rows.push(row);
    process.stderr.write(
      `${scenario}: ${JSON.stringify(row.cpuMsPerDelivery)} ${JSON.stringify(row.shape ?? {})}\n`,
    );
  };

  const createConfig = async (
    api: WebhooksUnderTest,
    type: string,
    tenantId?: string,
    extra: { filter?: Record<string, unknown>; auth?: Record<string, unknown> } = {},
  ) => {
    const r = await api.call("POST", "/configs", {
      endpoint: hook.url,
      eventTypes: [`bench.${type}`],
      ...(tenantId ? { tenantId } : {}),
      ...extra,
    });
    return r.body.data.id as string;
  };
  const publishAll = async (topic: string, type: string, prefix: string, tenant?: string) => {
    const js = nc.jetstream();
    for (let i = 0; i < EVENTS; i++)
      await js.publish(topic, JSON.stringify(event(type, `${prefix}-${i}`, 0, tenant)));
  };
  const postAll = async (api: WebhooksUnderTest, type: string, prefix: string) => {
    for (let i = 0; i < EVENTS; i += 16)
      await Promise.all(
        Array.from({ length: Math.min(16, EVENTS - i) }, (_, j) =>
          api.call("POST", "/events", event(type, `${prefix}-${i + j}`)),
        ),
      );
  };

  const run = Date.now().toString(36);
  const plainTopic = `benchf-${run}`;
  const plain = await start(plainTopic, []);
  try {
    const brokerId = await createConfig(plain, "broker");
    const httpId = await createConfig(plain, "http");
    const recoverId = await createConfig(plain, "recover");
    // Warm-up (JIT, connections), not measured.
    await publishAll(plainTopic, "broker", `warm-${run}`);
    await until("warm-up", () => hook.count() >= EVENTS);
    await measure(
      plain,
      "broker (baseline)",
      () => publishAll(plainTopic, "broker", `b-${run}`),
      sample(brokerId, `b-${run}`),
    );
    // Tenants: the broker path with each event naming its tenant by uid (matched in the
    // tenant's configs, one query joined to tenants).
    const tenant = await plain.call("POST", "/tenants", { uid: `bench-${run}` });
    if (tenant.status !== 200) throw new Error(tenant.text);
    const tenantConfigId = await createConfig(plain, "tenant", tenant.body.data.id);
    await measure(
      plain,
      "broker, event naming a tenant",
      () => publishAll(plainTopic, "tenant", `n-${run}`, `bench-${run}`),
      sample(tenantConfigId, `n-${run}`),
    );
    // The event catalog: the broker path with each payload checked against its type's schema.
    const schemaId = await createConfig(plain, "schema");
    const put = await plain.call("PUT", "/event-types/bench.schema", { schema: BENCH_SCHEMA });
    if (put.status !== 201) throw new Error(put.text);
    await measure(
      plain,
      "broker, payload schema checked",
      () => publishAll(plainTopic, "schema", `s-${run}`),
      sample(schemaId, `s-${run}`),
    );
    // Payload filters: the broker path to a config whose filter every event passes.
    const filteredId = await createConfig(plain, "filtered", undefined, {
      filter: {
        "payload.amount": { $gte: 10 },
        $or: [{ "payload.amount": 42 }, { "payload.kind": { $in: ["a", "b"] } }],
      },
    });
    await measure(
      plain,
      "broker, payload filter passed",
      () => publishAll(plainTopic, "filtered", `f-${run}`),
      sample(filteredId, `f-${run}`),
    );
    // Endpoint auth: a bearer token and two custom headers, sealed, opened at each send.
    const authId = await createConfig(plain, "auth", undefined, {
      auth: {
        bearer: { token: "bench-token" },
        headers: [
          { name: "X-Customer", value: "bench" },
          { name: "X-Region", value: "eu" },
        ],
      },
    });
    await measure(
      plain,
      "broker, bearer token and 2 custom headers",
      () => publishAll(plainTopic, "auth", `a-${run}`),
      sample(authId, `a-${run}`),
    );
    await measure(
      plain,
      "POST /events",
      () => postAll(plain, "http", `h-${run}`),
      sample(httpId, `h-${run}`),
    );
    // Failed deliveries, then their recovery.
    failing = true;
    const since = new Date(Date.now() - 1000).toISOString();
    const failedBefore = hook.count();
    await postAll(plain, "recover", `r-${run}`);
    await until("the failures", () => hook.count() - failedBefore >= EVENTS);
    await new Promise((r) => setTimeout(r, 1000));
    failing = false;
    await measure(plain, "bulk recovery (per replay)", async () => {
      const r = await plain.call(
        "POST",
        `/configs/${recoverId}/recover`,
        { since },
        { "idempotency-key": run },
      );
      if (r.status !== 202) throw new Error(r.text);
    });
  } finally {
    await plain.stop();
  }

  const tracedTopic = `benchf-t-${run}`;
  const traced = await start(tracedTopic, ["--tracing"]);
  try {
    const tracedId = await createConfig(traced, "broker");
    const warm = hook.count();
    await publishAll(tracedTopic, "broker", `tw-${run}`);
    await until("traced warm-up", () => hook.count() - warm >= EVENTS);
    await measure(
      traced,
      "broker, --tracing",
      () => publishAll(tracedTopic, "broker", `t-${run}`),
      sample(tracedId, `t-${run}`),
    );
  } finally {
    await traced.stop();
  }
  const sizedTopic = `benchf-s-${run}`;
  // Both carried through the sends queue, as deliveries of the previous version were by default.
  const sized = await start(sizedTopic, ["--send-mode", "queue"]);
  const connection = await Connection.connect({ address: sized.temporalAddress });
  const client = new Client({ connection });
  try {
    const configId = await createConfig(sized, "sized");
    const publishSized = async (prefix: string, bytes: number) => {
      const js = nc.jetstream();
      for (let i = 0; i < EVENTS; i++)
        await js.publish(sizedTopic, JSON.stringify(event("sized", `${prefix}-${i}`, bytes)));
    };
    // The input of a delivery started before events were stored: the event itself.
    const startByValue = async (prefix: string, bytes: number) => {
      for (let i = 0; i < EVENTS; i += 16)
        await Promise.all(
          Array.from({ length: Math.min(16, EVENTS - i) }, (_, j) => {
            const e = parseEventMessage(
              Buffer.from(JSON.stringify(event("sized", `${prefix}-${i + j}`, bytes))),
            );
            const workflowId = `delivery:${configId}:${e.idempotency_key}`;
            const input: DeliveryInput = {
              webhookId: webhookIdFor(workflowId),
              configId,
              event: e,
              policy: {
                minBackoffMs: 1000,
                maxBackoffMs: 3_600_000,
                abortAfterMs: 36_000_000,
                maxAttempts: 15,
                sendTimeoutMs: 30_000,
              },
              sendTaskQueue: sendQueue(sized.taskQueue),
              acceptedAt: new Date().toISOString(),
            };
            return client.workflow.start(deliverWebhook, {
              taskQueue: sized.taskQueue,
              workflowId,
              args: [input],
            });
          }),
        );
    };
    const warm = hook.count();
    await publishSized(`sw-${run}`, 1024);
    await until("sized warm-up", () => hook.count() - warm >= EVENTS);
    for (const [label, bytes] of SIZES) {
      await measure(
        sized,
        `${label} event, by reference`,
        () => publishSized(`ref-${bytes}-${run}`, bytes),
        sample(configId, `ref-${bytes}-${run}`),
      );
      await measure(
        sized,
        `${label} event, by value (as before)`,
        () => startByValue(`val-${bytes}-${run}`, bytes),
        sample(configId, `val-${bytes}-${run}`),
      );
    }
  } finally {
    await connection.close();
    await sized.stop();
  }
  await nc.close();
  hook.close();
  sink.close();

  const base = rows[0]!.cpuMsPerDelivery;
  const total = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);
  console.log(`\nCPU ms per delivery by component (${EVENTS} deliveries each; baseline: the broker path)\n`);
  const components = [...new Set(rows.flatMap((r) => Object.keys(r.cpuMsPerDelivery)))];
  console.log(`| scenario | ${components.join(" | ")} | total | vs baseline |`);
  console.log(`|---|${components.map(() => "---:").join("|")}|---:|---:|`);
  for (const r of rows) {
    const t = total(r.cpuMsPerDelivery);
    console.log(
      `| ${r.scenario} | ${components.map((c) => (r.cpuMsPerDelivery[c] ?? 0).toFixed(2)).join(" | ")} | ${t.toFixed(2)} | ${(t / total(base)).toFixed(2)} |`,
    );
  }
  console.log(`\nWhat Temporal did per delivery (mean of ${SHAPE_SAMPLE} histories per scenario)\n`);
  console.log(
    "| scenario | workflow tasks | activities | local activities | search attribute updates | history events | history KiB |",
  );
  console.log("|---|---:|---:|---:|---:|---:|---:|");
  for (const r of rows.filter((r) => r.shape)) {
    const h = r.shape!;
    console.log(
      `| ${r.scenario} | ${h.workflowTasks} | ${h.activities} | ${h.localActivities} | ${h.searchAttributeUpdates} | ${h.historyEvents} | ${(h.historyBytes / 1024).toFixed(1)} |`,
    );
  }
  mkdirSync(fromRoot("bench", "results"), { recursive: true });
  const file = fromRoot("bench", "results", "delivery-features.json");
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
