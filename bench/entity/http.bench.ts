// Entity server benchmark: starts the compiled `entity-server` command on a fresh
// database of the real PostgreSQL, drives it over HTTP/1.1 keep-alive at a fixed
// concurrency (closed loop) and prints requests per second, p50 and p99 for
// get-by-id and list (20 rows), in JSON and XML. Two references run in the same
// run: the same get-by-id done directly through Prisma in this process (what the
// HTTP adapter, rendering and the network hop cost on top of the query), and a
// trivial node:http server answering fixed bodies of the same sizes as the JSON
// answers (the ceiling HTTP itself has on the machine at that moment: it is
// shared, so it moves). Each scenario runs --repeats times; the table quotes
// medians. Results (every run and the medians) go to bench/results/entity-<time>.json.
//
//   node dist/bench/entity/http.bench.js [--seconds 5] [--repeats 3] [--concurrency 32]
//
// Targets: at least 3 000 get-by-id requests per second on this machine, and a
// 20-row JSON list at 0.3x or more of the ceiling for a body of its size.

import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { PrismaPg } from "@prisma/adapter-pg";
import { fromRoot } from "../../common/paths.js";
import { PrismaClient } from "../../generated/prisma/client.js";
import { createTestDatabase } from "../../test/support/postgres.js";
import { httpClient } from "../support/http-client.js";

const CLI = fileURLToPath(new URL("../../cmd/entity-server.js", import.meta.url));
const TARGET_GET_RPS = 3000;
const TARGET_LIST_CEILING_RATIO = 0.3;

const CEILING_ONE = "node:http ceiling, one-entity body";
const CEILING_LIST = "node:http ceiling, 20-row list body";
const LIST_JSON = "GET /config.json (list, 20 rows)";

interface Options {
  seconds: number;
  repeats: number;
  concurrency: number;
}

interface RunResult {
  requests: number;
  errors: number;
  rps: number;
  p50ms: number;
  p99ms: number;
}

function parseOptions(argv: string[]): Options {
  const o: Options = { seconds: 5, repeats: 3, concurrency: 32 };
  for (let i = 0; i < argv.length; i += 2) {
    const name = argv[i]!.replace(/^--?/, "") as keyof Options;
    const value = Number(argv[i + 1]);
    if (!(name in o) || !Number.isFinite(value) || value <= 0)
      throw new Error(`bad option ${argv[i]} ${argv[i + 1]}`);
    o[name] = value;
  }
  return o;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Runs `op` from `concurrency` loops for `seconds`; latency of each call in ms. */
async function closedLoop(
  op: (i: number) => Promise<boolean>,
  seconds: number,
  concurrency: number,
): Promise<RunResult> {
  const latencies: number[] = [];
  let errors = 0;
  let i = 0;
  const started = performance.now();
  const end = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const t0 = performance.now();
        const ok = await op(i++);
        latencies.push(performance.now() - t0);
        if (!ok) errors++;
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    requests: latencies.length,
    errors,
    rps: latencies.length / elapsed,
    p50ms: percentile(latencies, 50),
    p99ms: percentile(latencies, 99),
  };
}

/** GET answering whether the status was 200 (a transport error counts as a failed request). */
function httpGetter(baseUrl: string, concurrency: number) {
  const client = httpClient(baseUrl, concurrency);
  return (path: string) =>
    client.request("GET", path).then(
      (a) => a.status === 200,
      () => false,
    );
}

// A node:http server that answers fixed bodies without any work: /list the bytes of a
// 20-row list answer, anything else those of one entity. The ceiling of HTTP on this machine right now.
const TRIVIAL_SERVER = `const list = Buffer.from(process.env.BENCH_LIST_BODY), one = Buffer.from(process.env.BENCH_ONE_BODY);
require("node:http").createServer((q, s) => { s.setHeader("content-type", "application/json; charset=utf-8"); s.end(q.url === "/list" ? list : one); })
  .listen(0, "127.0.0.1", function () { console.log(JSON.stringify({ listen: "127.0.0.1:" + this.address().port })); });`;

function startServer(
  dbUrl: string,
  trivialBodies?: { list: string; one: string },
): Promise<{ child: ChildProcess; baseUrl: string }> {
  const args = trivialBodies ? ["-e", TRIVIAL_SERVER] : [CLI, "--listen", "127.0.0.1:0"];
  const bodies = trivialBodies
    ? { BENCH_LIST_BODY: trivialBodies.list, BENCH_ONE_BODY: trivialBodies.one }
    : {};
  const child = spawn(process.execPath, args, {
    env: { ...process.env, DATABASE_URL: dbUrl, LOG_LEVEL: "info", ...bodies },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`entity-server did not start within 30s: ${out}`)),
      30_000,
    );
    const onData = (d: Buffer) => {
      out += d;
      const m = /"listen":"[^"]*:(\d+)"/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, baseUrl: `http://127.0.0.1:${m[1]}` });
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.on("exit", (code) => reject(new Error(`entity-server exited with ${code}: ${out}`)));
  });
}

async function main(): Promise<void> {
  const o = parseOptions(process.argv.slice(2));
  const db = await createTestDatabase();
  const prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: db.url, max: 10 }) });
  let server: ChildProcess | undefined;
  let trivial: ChildProcess | undefined;
  try {
    const ids: string[] = [];
    for (let n = 0; n < 200; n++) {
      const c = await prisma.config.create({
        data: {
          endpoint: `http://bench.test/${n}`,
          eventTypes: ["ledger.committed", "payments.*"],
          secret: `s${n}`,
        },
      });
      ids.push(c.id);
    }
    // Per-request logs are debug level, so the default info level keeps them out of the measurement.
    const started = await startServer(db.url);
    server = started.child;
    const get = httpGetter(started.baseUrl, o.concurrency);
    const sample = httpClient(started.baseUrl, 1);
    const listBody = (await sample.request("GET", "/config.json?_page=1")).body.toString();
    const oneBody = (await sample.request("GET", `/config/${ids[0]}.json`)).body.toString();
    sample.close();
    const ceiling = await startServer(db.url, { list: listBody, one: oneBody });
    trivial = ceiling.child;
    const getTrivial = httpGetter(ceiling.baseUrl, o.concurrency);

    const scenarios: [string, (i: number) => Promise<boolean>][] = [
      [
        "prisma findUnique (baseline, in process)",
        async (i) => (await prisma.config.findUnique({ where: { id: ids[i % ids.length]! } })) !== null,
      ],
      [CEILING_ONE, () => getTrivial("/one")],
      [CEILING_LIST, () => getTrivial("/list")],
      ["GET /config/{id}.json", (i) => get(`/config/${ids[i % ids.length]}.json`)],
      ["GET /config/{id}.xml", (i) => get(`/config/${ids[i % ids.length]}.xml`)],
      [LIST_JSON, (i) => get(`/config.json?_page=${(i % 10) + 1}`)],
      ["GET /config.xml (list, 20 rows)", (i) => get(`/config.xml?_page=${(i % 10) + 1}`)],
    ];

    await closedLoop(scenarios[3]![1], 1, o.concurrency); // warm-up: JIT, pools, query plans
    await closedLoop(scenarios[5]![1], 1, o.concurrency);
    await closedLoop(scenarios[0]![1], 1, o.concurrency);
    const runs: Record<string, RunResult[]> = {};
    for (let r = 0; r < o.repeats; r++) {
      // Rotate the order each repeat so no scenario always runs right after the same neighbour.
      const order = scenarios.map((_, k) => scenarios[(k + r) % scenarios.length]!);
      for (const [name, op] of order) {
        const result = await closedLoop(op, o.seconds, o.concurrency);
        runs[name] = [...(runs[name] ?? []), result];
      }
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const medians = Object.fromEntries(
      Object.entries(runs).map(([name, rs]) => [
        name,
        {
          rps: median(rs.map((x) => x.rps)),
          p50ms: median(rs.map((x) => x.p50ms)),
          p99ms: median(rs.map((x) => x.p99ms)),
          errors: rs.reduce((s, x) => s + x.errors, 0),
        },
      ]),
    );
    const baseline = medians["prisma findUnique (baseline, in process)"]!.rps;
    // Each answer against the ceiling for a body of its size (XML bodies are a little larger).
    const ceilingOf = (name: string) =>
      medians[name.includes("(list") ? CEILING_LIST : name.startsWith("GET ") ? CEILING_ONE : name]!.rps;
    const rows = Object.entries(medians).map(([name, m]) => ({
      scenario: name,
      "req/s": Math.round(m.rps),
      "p50 ms": m.p50ms.toFixed(2),
      "p99 ms": m.p99ms.toFixed(2),
      "vs baseline": (m.rps / baseline).toFixed(2),
      "vs ceiling": name.startsWith("prisma") ? "" : (m.rps / ceilingOf(name)).toFixed(2),
      errors: m.errors,
    }));
    console.log(`entity-server, concurrency ${o.concurrency}, ${o.seconds}s x ${o.repeats} runs (medians)`);
    console.log(
      `ceiling bodies: list ${Buffer.byteLength(listBody)} bytes, one entity ${Buffer.byteLength(oneBody)} bytes`,
    );
    console.table(rows);
    const getJson = medians["GET /config/{id}.json"]!.rps;
    const getXml = medians["GET /config/{id}.xml"]!.rps;
    const verdict = Math.min(getJson, getXml) >= TARGET_GET_RPS ? "met" : "NOT met";
    console.log(
      `target ${TARGET_GET_RPS} get-by-id req/s: ${verdict} (json ${Math.round(getJson)}, xml ${Math.round(getXml)})`,
    );
    const listJson = medians[LIST_JSON]!.rps;
    const listRatio = listJson / medians[CEILING_LIST]!.rps;
    // Ratio of medians and median of the per-repeat ratios (each repeat measures both within seconds).
    const perRepeat = runs[LIST_JSON]!.map((r, k) => r.rps / runs[CEILING_LIST]![k]!.rps);
    const listRatioMedian = median(perRepeat);
    console.log(
      `target list of 20 >= ${TARGET_LIST_CEILING_RATIO}x the ceiling: ${listRatioMedian >= TARGET_LIST_CEILING_RATIO ? "met" : "NOT met"} ` +
        `(json ${Math.round(listJson)} req/s, ceiling ${Math.round(medians[CEILING_LIST]!.rps)}: ${listRatio.toFixed(2)}x; ` +
        `per repeat ${perRepeat.map((x) => x.toFixed(2)).join(", ")}, median ${listRatioMedian.toFixed(2)}x)`,
    );

    const outDir = fromRoot("bench", "results");
    mkdirSync(outDir, { recursive: true });
    const file = path.join(outDir, `entity-${new Date().toISOString().replace(/[:.]/g, "-")}.json`);
    writeFileSync(
      file,
      `${JSON.stringify(
        {
          options: o,
          targetGetRps: TARGET_GET_RPS,
          targetListCeilingRatio: TARGET_LIST_CEILING_RATIO,
          bodyBytes: { list: Buffer.byteLength(listBody), one: Buffer.byteLength(oneBody) },
          listCeilingRatio: { ofMedians: listRatio, perRepeat, median: listRatioMedian },
          medians,
          runs,
          node: process.version,
        },
        null,
        2,
      )}\n`,
    );
    console.log(`results: ${path.relative(fromRoot(), file)}`);
  } finally {
    server?.kill("SIGTERM");
    trivial?.kill("SIGTERM");
    await prisma.$disconnect();
    await db.drop();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
