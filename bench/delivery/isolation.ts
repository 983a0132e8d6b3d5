import { mkdir, writeFile } from "node:fs/promises";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Client, Connection } from "@temporalio/client";
import { historyToJSON } from "@temporalio/common/lib/proto-utils.js";
import { connect } from "nats";
import { fromRoot } from "../../common/paths.js";
import { stopTestTemporal, testTemporal } from "../../test/support/temporal.js";
import { startWebhooks } from "../../test/support/webhooks-server.js";
import { CpuMeter } from "../support/cpu-by-process.js";

// bench/delivery/isolation: the promise of the default send mode (local-first). A fast
// receiver's deliveries, paced, measured alone and then beside configs whose receivers
// accept the connection and never answer, in alternated rounds of one run. The ratio of
// the fast receiver's p99 latency (publish to receipt) with the hanging receivers to its
// p99 alone is the figure; every delivery's history is read for workflow-task timeouts.
// The hanging configs' events are published over the same window as the fast ones.
// Usage: node dist/bench/delivery/isolation.js [fast-events=500] [hanging-configs=50]
//   [hanging-events=500, spread over the configs] [rate=20/s] [rounds=3] [-- serve flags…]
// Flags after `--` go to `webhooks serve` (e.g. `-- --storage-sqldb-pool-size 30`).

const FAST = Number(process.argv[2] ?? 500);
const HANGING_CONFIGS = Number(process.argv[3] ?? 50);
const HANGING_EVENTS = Number(process.argv[4] ?? 500);
const RATE = Number(process.argv[5] ?? 20);
const ROUNDS = Number(process.argv[6] ?? 3);
const SERVE_ARGS = process.argv.includes("--") ? process.argv.slice(process.argv.indexOf("--") + 1) : [];

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * p))] ?? 0;
};
const median = (xs: number[]) => pct(xs, 0.5);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main(): Promise<void> {
  const latencies = new Map<string, number[]>();
  /** Per run: when each fast event was published (ms since epoch) and its webhook id, in receipt order. */
  const sentTimes = new Map<string, { sentAt: number; webhookId: string }[]>();
  const held: ServerResponse[] = [];
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      if (req.url?.startsWith("/hang")) return void held.push(res);
      // Only the fast receiver's latencies are the figure; the peers just answer.
      if (req.url !== "/fast") return void res.writeHead(200).end();
      const { payload } = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      const list = latencies.get(payload.run) ?? [];
      list.push(Date.now() - payload.sentAt);
      latencies.set(payload.run, list);
      const sent = sentTimes.get(payload.run) ?? [];
      sent.push({ sentAt: payload.sentAt, webhookId: String(req.headers["svc-webhook-id"]) });
      sentTimes.set(payload.run, sent);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  const base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

  const topic = `bench-isolation-${Date.now()}`;
  const stream = `BENCH_ISOLATION_${Date.now()}`;
  const api = await startWebhooks({
    worker: true,
    args: [
      "--broker-topics",
      topic,
      "--nats-stream",
      stream,
      "--audit-topic",
      "",
      "--log-level",
      "warn",
      // A hanging receiver's retries park for the run; its POSTs end at the send timeout.
      "--min-backoff-delay",
      "1h",
      "--send-timeout",
      "10s",
      ...SERVE_ARGS,
    ],
  });
  const create = async (endpoint: string, type: string) => {
    const res = await fetch(`${api.url}/configs`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ endpoint, eventTypes: [`bench.${type}`] }),
    });
    if (!res.ok) throw new Error(await res.text());
    return ((await res.json()) as { data: { id: string } }).data.id;
  };
  const temporalPids = await (await testTemporal()).pids();
  const cpu = new CpuMeter((p, comm) => {
    if (p === api.process.child.pid) return "webhooks";
    if (temporalPids.includes(p)) return "Temporal";
    if (comm === "postgres") return "PostgreSQL";
    return undefined;
  });
  const nc = await connect({ servers: "nats://127.0.0.1:4222" });
  const js = nc.jetstream();
  const publish = (run: string, type: string, i: number) =>
    js.publish(
      topic,
      JSON.stringify({
        idempotency_key: `${run}-${type}-${i}`,
        app: "bench",
        type,
        payload: { run, sentAt: Date.now() },
      }),
    );

  /** FAST fast events at RATE/s, and `hanging` events spread over the same window. */
  const phase = async (run: string, hangingTypes: string[]) => {
    const started = Date.now();
    cpu.start();
    // The process's queues while the phase runs: the database pool and workflow-task slots.
    const peaks = { dbPoolWaiting: 0, dbPoolBusy: 0, workflowTaskSlotsHeld: 0 };
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const text = await (await fetch(`${api.url}/metrics`)).text();
        const read = (name: string) => Number(new RegExp(`^${name} (\\d+)`, "m").exec(text)?.[1] ?? 0);
        peaks.dbPoolWaiting = Math.max(peaks.dbPoolWaiting, read("webhooks_db_pool_waiting"));
        peaks.dbPoolBusy = Math.max(peaks.dbPoolBusy, read('webhooks_db_pool_connections\\{state="busy"\\}'));
        peaks.workflowTaskSlotsHeld = Math.max(
          peaks.workflowTaskSlotsHeld,
          read("webhooks_workflow_task_slots_held"),
        );
        await sleep(100);
      }
    })();
    const windowMs = (FAST * 1000) / RATE;
    const total = FAST + (hangingTypes.length ? HANGING_EVENTS : 0);
    const order = Array.from({ length: total }, (_, i) => i);
    const pubs: Promise<unknown>[] = [];
    let fast = 0;
    let hanging = 0;
    for (const i of order) {
      const due = started + (i * windowMs) / total;
      if (due > Date.now()) await sleep(due - Date.now());
      // The fast events evenly among the hanging ones.
      const isFast = hangingTypes.length === 0 || Math.floor(((i + 1) * FAST) / total) > fast;
      if (isFast) pubs.push(publish(run, "fast", fast++));
      else pubs.push(publish(run, hangingTypes[hanging % hangingTypes.length]!, hanging++));
    }
    await Promise.all(pubs);
    const deadline = Date.now() + 600_000;
    while ((latencies.get(run)?.length ?? 0) < FAST) {
      if (Date.now() > deadline)
        throw new Error(`${run}: ${latencies.get(run)?.length ?? 0}/${FAST} delivered`);
      await sleep(20);
    }
    sampling = false;
    await sampler;
    // What the phase cost, its other configs' send timeouts included (they end within
    // --send-timeout of the window's end): the hanging phase's tail is contention for CPU
    // if this is where it differs from the answering one.
    await sleep(11_000);
    const cpuSeconds = Object.fromEntries(
      Object.entries(cpu.delta()).map(([k, v]) => [k, Number((v / 1000).toFixed(1))]),
    );
    const lat = latencies.get(run)!;
    const sent = sentTimes.get(run)!;
    // The slowest 1 %, with when in the phase they were published: a tail bunched at the
    // start points at the other configs' first sends, one spread out at steady load.
    const slowest = lat
      .map((ms, i) => ({
        ms,
        atS: Number(((sent[i]!.sentAt - started) / 1000).toFixed(1)),
        sentAt: sent[i]!.sentAt,
        webhookId: sent[i]!.webhookId,
      }))
      .sort((a, b) => b.ms - a.ms)
      .slice(0, Math.max(1, Math.ceil(lat.length / 100)));
    return {
      p50: pct(lat, 0.5),
      p99: pct(lat, 0.99),
      max: pct(lat, 1),
      otherEvents: hanging,
      slowest,
      peaks,
      cpuSeconds,
    };
  };

  await create(`${base}/fast`, "fast");
  process.stderr.write("warm-up…\n");
  await phase("warmup", []);
  type Phase = Awaited<ReturnType<typeof phase>>;
  const rounds: { alone: Phase; answering: Phase; hanging: Phase }[] = [];
  /** New configs each round, so the first sends of each round meet fresh configs. */
  const configsOf = (kind: "hang" | "answer", r: number) =>
    Promise.all(
      Array.from({ length: HANGING_CONFIGS }, async (_, i) => {
        const type = `${kind}_${r}_${i}`;
        await create(`${base}/${kind}/${r}/${i}`, type);
        return type;
      }),
    );
  for (let r = 0; r < ROUNDS; r++) {
    const hangingTypes = await configsOf("hang", r);
    const answeringTypes = await configsOf("answer", r);
    const label = `round ${r + 1}/${ROUNDS}: ${FAST} fast events`;
    process.stderr.write(`${label} alone…\n`);
    const alone = await phase(`alone-${r}`, []);
    process.stderr.write(`${label} beside ${HANGING_EVENTS} to ${HANGING_CONFIGS} answering receivers…\n`);
    const answering = await phase(`answering-${r}`, answeringTypes);
    process.stderr.write(`${label} beside ${HANGING_EVENTS} to ${HANGING_CONFIGS} hanging receivers…\n`);
    const hanging = await phase(`hanging-${r}`, hangingTypes);
    rounds.push({ alone, answering, hanging });
    const tail = (x: Phase) => x.slowest.map((s) => `${s.ms} ms at ${s.atS} s`).join(", ");
    process.stderr.write(`  slowest: beside answering ${tail(answering)}; beside hanging ${tail(hanging)}\n`);
    process.stderr.write(
      `  CPU s: alone ${JSON.stringify(alone.cpuSeconds)}, beside answering ${JSON.stringify(answering.cpuSeconds)}, beside hanging ${JSON.stringify(hanging.cpuSeconds)}\n`,
    );
    process.stderr.write(
      `  peaks: alone ${JSON.stringify(alone.peaks)}, beside answering ${JSON.stringify(answering.peaks)}, beside hanging ${JSON.stringify(hanging.peaks)}\n`,
    );
  }

  // Where first sends went, and whether starts waited (the process's own counters).
  const metrics = await (await fetch(`${api.url}/metrics`)).text();
  const counters = metrics
    .split("\n")
    .filter((l) =>
      /^webhooks_(first_sends_total|starts_waiting|deliveries_in_flight|workflow_task_slots)/.test(l),
    );

  // Every delivery's history: workflow-task timeouts (none expected).
  process.stderr.write("reading histories…\n");
  const temporal = new Client({ connection: await Connection.connect({ address: api.temporalAddress }) });
  let histories = 0;
  let taskTimeouts = 0;
  for await (const wf of temporal.workflow.list({ query: `WorkflowType = "deliverWebhook"` })) {
    const history = await temporal.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory();
    histories++;
    taskTimeouts += (historyToJSON(history).match(/WORKFLOW_TASK_TIMED_OUT/g) ?? []).length;
  }
  // Where the slowest fast deliveries spent their time: each history event's offset (ms)
  // from the event's publication.
  const timelines: Record<string, string[]> = {};
  for (const [i, r] of rounds.entries()) {
    for (const [kind, p] of [
      ["answering", r.answering],
      ["hanging", r.hanging],
    ] as const) {
      for (const slow of p.slowest) {
        const found = temporal.workflow.list({ query: `WebhookId = "${slow.webhookId}"` });
        for await (const wf of found) {
          const history = await temporal.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory();
          const events = JSON.parse(historyToJSON(history)).events as {
            eventTime: string;
            eventType: string;
          }[];
          const steps = events.map(
            (e) =>
              `${String(e.eventType)
                .replace(/^EVENT_TYPE_/, "")
                .toLowerCase()} +${Date.parse(e.eventTime) - slow.sentAt}`,
          );
          const line = `round ${i + 1} beside ${kind}, ${slow.ms} ms at ${slow.atS} s: ${steps.join(", ")}`;
          process.stderr.write(`  ${line}\n`);
          const key = `round ${i + 1} ${kind}`;
          timelines[key] = [...(timelines[key] ?? []), line];
          break;
        }
      }
    }
  }
  await temporal.connection.close();

  const toPeer = rounds.map((r) => r.hanging.p99 / r.answering.p99);
  const toAlone = rounds.map((r) => r.hanging.p99 / r.alone.p99);
  const ms = (x: Phase) => `${x.p50} / ${x.p99}`;
  const cpuOf = (x: Phase) =>
    Object.values(x.cpuSeconds)
      .reduce((a, b) => a + b, 0)
      .toFixed(1);
  console.log(
    `\nFast receiver at ${RATE}/s, ${FAST} events per phase, default send mode; ${HANGING_EVENTS} events to ${HANGING_CONFIGS} other configs beside it`,
  );
  console.log(
    "| round | alone p50 / p99 ms | beside answering p50 / p99 ms | beside hanging p50 / p99 ms | p99 hanging / answering | p99 hanging / alone | CPU s alone / answering / hanging |",
  );
  console.log("|---|---|---|---|---:|---:|---|");
  rounds.forEach((r, i) => {
    console.log(
      `| ${i + 1} | ${ms(r.alone)} | ${ms(r.answering)} | ${ms(r.hanging)} | ${toPeer[i]!.toFixed(2)} | ${toAlone[i]!.toFixed(2)} | ${cpuOf(r.alone)} / ${cpuOf(r.answering)} / ${cpuOf(r.hanging)} |`,
    );
  });
  for (const line of counters) console.log(line);
  console.log(
    `medians: p99 hanging / answering ${median(toPeer).toFixed(2)}, hanging / alone ${median(toAlone).toFixed(2)}; ${taskTimeouts} workflow-task timeouts in ${histories} histories`,
  );

  await mkdir(fromRoot("bench", "results"), { recursive: true });
  await writeFile(
    fromRoot("bench", "results", "delivery-isolation.json"),
    `${JSON.stringify({ serveArgs: SERVE_ARGS, fast: FAST, hangingConfigs: HANGING_CONFIGS, hangingEvents: HANGING_EVENTS, rate: RATE, rounds, toPeer, toAlone, histories, taskTimeouts, timelines }, null, 2)}\n`,
  );
  for (const res of held) res.destroy();
  await nc
    .jetstreamManager()
    .then((m) => m.streams.delete(stream))
    .catch(() => undefined);
  await nc.close();
  await api.stop();
  await stopTestTemporal();
  receiver.close();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
