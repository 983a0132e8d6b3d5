import { readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Client, Connection } from "@temporalio/client";
import { connect } from "nats";
import { sendWebhook } from "../../activities/http-send.js";
import { verifySignature } from "../../activities/signature.js";
import { fromRoot } from "../../common/paths.js";
import { stopTestTemporal, testTemporal } from "../../test/support/temporal.js";
import { startWebhooks } from "../../test/support/webhooks-server.js";
import { CpuMeter } from "../support/cpu-by-process.js";

// bench/delivery: events published to NATS, delivered by `webhooks serve
// --worker` through Temporal workflows to a local receiver that verifies every
// signature. Baseline in the same script: the same signed send code called
// directly (no broker, no Temporal, no database) at the same concurrency.
// Usage: node dist/bench/delivery/run.js [events] [pending-retries] [send-mode: local-first|queue|local]
// (pending 0 skips the parked-deliveries run). TEST_TEMPORAL=server runs it on the
// production Temporal server (scripts/temporal-server.sh) instead of the dev server.

const EVENTS = Number(process.argv[2] ?? 2000);
const PENDING = Number(process.argv[3] ?? 10_000);
const SEND_MODE = process.argv[4] ?? "local-first";
const SERVER = process.env.TEST_TEMPORAL === "server" ? "server" : "dev";
const SERVER_LABEL = SERVER === "server" ? "Temporal server (PostgreSQL)" : "Temporal dev server";
const SECRET = Buffer.alloc(24, 9).toString("base64");

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * p))] ?? 0;
};
const rssMb = (pid: number) =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;

async function main(): Promise<void> {
  // Receiver: verifies each signature, records receipt latency by run.
  const received = new Map<string, number[]>();
  let badSignatures = 0;
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const ok = verifySignature(
        SECRET,
        {
          id: String(req.headers["svc-webhook-id"]),
          timestamp: String(req.headers["svc-webhook-timestamp"]),
          signature: String(req.headers["svc-webhook-signature"]),
        },
        body,
      );
      if (!ok) badSignatures++;
      if (req.url === "/failing") return void res.writeHead(503).end();
      const { payload } = JSON.parse(body.toString("utf8"));
      const list = received.get(payload.run) ?? [];
      list.push(Date.now() - payload.sentAt);
      received.set(payload.run, list);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  const base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

  const waitFor = async (run: string, n: number, timeoutMs = 600_000) => {
    const deadline = Date.now() + timeoutMs;
    while ((received.get(run)?.length ?? 0) < n) {
      if (Date.now() > deadline) throw new Error(`${run}: ${received.get(run)?.length ?? 0}/${n} delivered`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  // Baseline: the send code alone, 64 at a time.
  const direct = async (n: number) => {
    const started = Date.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        while (next < n) {
          next++;
          const body = JSON.stringify({ payload: { run: "direct", sentAt: Date.now() } });
          await sendWebhook({
            endpoint: `${base}/ok`,
            webhookId: "w",
            body,
            secrets: [SECRET],
            idempotencyKey: "",
            test: false,
          });
        }
      }),
    );
    return n / ((Date.now() - started) / 1000);
  };

  const topic = `bench-${Date.now()}`;
  // Deleted at the end: JetStream reserves each stream's max bytes (1 GiB) of its storage,
  // so streams left by earlier runs would at last refuse new ones.
  const stream = `BENCH_${Date.now()}`;
  const api = await startWebhooks({
    worker: true,
    // e.g. BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" to profile the worker
    nodeArgs: (process.env.BENCH_NODE_ARGS ?? "").split(" ").filter(Boolean),
    args: [
      "--broker-topics",
      topic,
      "--nats-stream",
      stream,
      "--audit-topic",
      "",
      "--min-backoff-delay",
      "1h",
      "--log-level",
      "warn",
      "--max-concurrent-sends",
      "200",
      "--max-concurrent-workflow-tasks",
      "100",
      "--send-mode",
      SEND_MODE,
      // e.g. BENCH_WORKER_ARGS="--max-cached-workflows 200"
      ...(process.env.BENCH_WORKER_ARGS ?? "").split(" ").filter(Boolean),
    ],
  });
  const url = api.url;
  const temporalPids = await (await testTemporal()).pids();
  const workerPid = api.process.child.pid;
  // Where the CPU goes during a burst, per delivery, by component.
  const cpu = new CpuMeter((pid, comm) => {
    if (pid === workerPid) return "webhooks worker (node)";
    if (temporalPids.includes(pid)) return SERVER_LABEL;
    if (pid === process.pid) return "bench: publisher + receiver";
    if (comm === "postgres") return "PostgreSQL";
    if (comm === "nats-server") return "NATS";
    return undefined;
  });
  const create = async (endpoint: string, type: string) => {
    const res = await fetch(`${url}/configs`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ endpoint, eventTypes: [`bench.${type}`], secret: SECRET }),
    });
    if (!res.ok) throw new Error(await res.text());
    return ((await res.json()) as { data: { id: string } }).data.id;
  };
  await create(`${base}/ok`, "ok");
  const failingConfig = await create(`${base}/failing`, "failing");
  const nc = await connect({ servers: "nats://127.0.0.1:4222" });
  const js = nc.jetstream();
  const publish = (run: string, type: string, i: number) =>
    js.publish(
      topic,
      JSON.stringify({
        idempotency_key: `${run}-${i}`,
        app: "bench",
        type,
        payload: { run, sentAt: Date.now() },
      }),
    );

  const burst = async (run: string) => {
    const started = Date.now();
    const pubs: Promise<unknown>[] = [];
    for (let i = 0; i < EVENTS; i++) pubs.push(publish(run, "ok", i));
    await Promise.all(pubs);
    await waitFor(run, EVENTS);
    const lat = received.get(run)!;
    return {
      events: EVENTS,
      perSecond: EVENTS / ((Date.now() - started) / 1000),
      p50: pct(lat, 0.5),
      p99: pct(lat, 0.99),
    };
  };

  const paced = async (run: string, rate: number, seconds: number) => {
    const n = rate * seconds;
    const started = Date.now();
    for (let i = 0; i < n; i++) {
      const due = started + (i * 1000) / rate;
      if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
      void publish(run, "ok", i);
    }
    await waitFor(run, n);
    const lat = received.get(run)!;
    return { rate, events: n, p50: pct(lat, 0.5), p99: pct(lat, 0.99) };
  };

  process.stderr.write("baseline: direct signed sends…\n");
  await direct(500);
  const directRate = await direct(EVENTS);
  process.stderr.write("warm-up…\n");
  await burst("warmup");
  // How many of a phase's starts were eager (the server handed the first task straight to
  // this process's worker), from the webhooks process's own counters.
  const startCounts = async () => {
    const text = await (await fetch(`${url}/metrics`)).text();
    const read = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, "m").exec(text)?.[1] ?? 0);
    return {
      starts: read("webhooks_workflows_started_total"),
      eager: read("webhooks_workflows_started_eagerly_total"),
    };
  };
  const phaseStarts = async <T>(phase: () => Promise<T>) => {
    const before = await startCounts();
    const result = await phase();
    const after = await startCounts();
    return { result, starts: after.starts - before.starts, eager: after.eager - before.eager };
  };
  process.stderr.write(`burst of ${EVENTS}…\n`);
  cpu.start();
  const burstStarts = await phaseStarts(() => burst("burst"));
  const idle = burstStarts.result;
  const cpuPerDelivery = Object.fromEntries(
    Object.entries(cpu.delta()).map(([name, ms]) => [name, ms / EVENTS]),
  );
  const rssIdle = rssMb(api.process.child.pid!);
  const pacedRate = Math.max(10, Math.round(idle.perSecond / 2));
  // At least 10 s and 300 deliveries: with 100, the 99th percentile is the slowest one.
  const pacedSeconds = Math.max(10, Math.ceil(300 / pacedRate));
  process.stderr.write(`paced at ${pacedRate}/s for ${pacedSeconds} s…\n`);
  const pacedStarts = await phaseStarts(() => paced("paced", pacedRate, pacedSeconds));
  const pacedRun = pacedStarts.result;

  // Deliveries parked on retry timers, then the same burst beside them (skipped with pending 0).
  const parkAndBurst = async () => {
    process.stderr.write(`parking ${PENDING} deliveries on retry timers…\n`);
    const pubs: Promise<unknown>[] = [];
    for (let i = 0; i < PENDING; i++) pubs.push(publish("pending", "failing", i));
    await Promise.all(pubs);
    // Parked means the workflow finished the task after its first attempt and sleeps on
    // its retry timer (its status attribute says so), not merely that the attempt row exists.
    const temporal = new Client({ connection: await Connection.connect({ address: api.temporalAddress }) });
    const parkedQuery = `WebhookDeliveryStatus = "to retry" AND WebhookConfigId = "${failingConfig}"`;
    const parkStarted = Date.now();
    const deadline = parkStarted + 1_800_000;
    for (;;) {
      const { count } = await temporal.workflow.count(parkedQuery);
      if (count >= PENDING) break;
      if (Date.now() > deadline) throw new Error(`only ${count}/${PENDING} deliveries parked`);
      await new Promise((res) => setTimeout(res, 1000));
    }
    const parkSeconds = (Date.now() - parkStarted) / 1000;
    await temporal.connection.close();
    process.stderr.write(`burst of ${EVENTS} with ${PENDING} pending…\n`);
    cpu.start();
    const loaded = await burst("burst-with-pending");
    const cpuPerDeliveryLoaded = Object.fromEntries(
      Object.entries(cpu.delta()).map(([name, ms]) => [name, ms / EVENTS]),
    );
    return { loaded, cpuPerDeliveryLoaded, parkSeconds, rssLoaded: rssMb(api.process.child.pid!) };
  };
  const parked = PENDING > 0 ? await parkAndBurst() : undefined;

  const rows = [
    ["direct signed sends (baseline)", directRate, NaN, NaN],
    [`burst of ${EVENTS} via NATS + Temporal`, idle.perSecond, idle.p50, idle.p99],
    [`paced at ${pacedRate}/s for ${pacedSeconds} s`, pacedRate, pacedRun.p50, pacedRun.p99],
    ...(parked
      ? ([
          [
            `burst with ${PENDING} on retry timers`,
            parked.loaded.perSecond,
            parked.loaded.p50,
            parked.loaded.p99,
          ],
        ] as const)
      : []),
  ] as const;
  console.log(
    `\nwebhook delivery on the ${SERVER_LABEL}, --send-mode ${SEND_MODE} (receiver verifies every signature; bad signatures: ${badSignatures})\n`,
  );
  console.log("| run | deliveries/s | p50 ms | p99 ms |");
  console.log("|---|---:|---:|---:|");
  for (const [name, rate, p50, p99] of rows) {
    console.log(
      `| ${name} | ${rate.toFixed(0)} | ${Number.isNaN(p50) ? "" : p50.toFixed(0)} | ${Number.isNaN(p99) ? "" : p99.toFixed(0)} |`,
    );
  }
  console.log(`\nratio to the direct baseline: ${(idle.perSecond / directRate).toFixed(3)}`);
  console.log(`serve --worker RSS: ${rssIdle.toFixed(0)} MB idle-after-burst`);
  if (parked) {
    console.log(
      `first-attempt slowdown with ${PENDING} pending: ${((1 - parked.loaded.perSecond / idle.perSecond) * 100).toFixed(1)} %`,
    );
    console.log(`serve --worker RSS with ${PENDING} pending: ${parked.rssLoaded.toFixed(0)} MB`);
    console.log(`parking ${PENDING} deliveries on retry timers took ${parked.parkSeconds.toFixed(0)} s`);
  }
  const { starts, eager: eagerStarts } = await startCounts();
  console.log(
    `started with eager workflow start: ${eagerStarts} of ${starts} (burst ${burstStarts.eager} of ${burstStarts.starts}, paced ${pacedStarts.eager} of ${pacedStarts.starts})`,
  );

  console.log("\nCPU per delivery during the bursts (from /proc, independent of other load):\n");
  console.log(`| component | CPU ms/delivery | with ${PENDING} pending |`);
  console.log("|---|---:|---:|");
  for (const [name, ms] of Object.entries(cpuPerDelivery).sort((a, b) => b[1] - a[1])) {
    console.log(
      `| ${name} | ${ms.toFixed(2)} | ${parked ? (parked.cpuPerDeliveryLoaded[name] ?? 0).toFixed(2) : ""} |`,
    );
  }

  await mkdir(fromRoot("bench", "results"), { recursive: true });
  const out = fromRoot(
    "bench",
    "results",
    `delivery-${SEND_MODE}${SERVER === "server" ? "-server" : ""}.json`,
  );
  await writeFile(
    out,
    `${JSON.stringify({ date: new Date().toISOString(), events: EVENTS, pending: PENDING, sendMode: SEND_MODE, server: SERVER, directRate, idle, cpuPerDelivery, paced: pacedRun, ...parked, rssIdle, starts, eagerStarts, eagerByPhase: { burst: { starts: burstStarts.starts, eager: burstStarts.eager }, paced: { starts: pacedStarts.starts, eager: pacedStarts.eager } }, badSignatures }, null, 2)}\n`,
  );
  console.log(`wrote ${out}`);

  receiver.close();
  await api.stop();
  await (await nc.jetstreamManager()).streams.delete(stream);
  await nc.close();
  await stopTestTemporal();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
