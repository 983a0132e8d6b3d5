import { randomUUID } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import pg from "pg";
import { fromRoot } from "../../common/paths.js";
import { createTestDatabase } from "../../test/support/postgres.js";
import { childPids } from "../../test/support/process.js";
import { stopTestTemporal, testTemporal } from "../../test/support/temporal.js";
import { startWebhooks } from "../../test/support/webhooks-server.js";
import { CpuMeter } from "../support/cpu-by-process.js";
import { httpClient } from "../support/http-client.js";

// bench/api: the configs API under a realistic mix (get 70 %, filtered list 10 %,
// create 10 %, update 10 %) at increasing concurrency with 10 000 configs
// stored, plus the full list of all 10 000. Baseline in the same script: a bare
// node:http server answering a fixed config-sized JSON, i.e. the HTTP floor of
// this machine and this client. Each level runs `repeats` times (floor and mix
// interleaved) and reports medians, plus the CPU each process spent per request
// (from /proc), which a noisy shared machine disturbs far less than throughput.
// Each process count runs in turn (`serve --processes N`: N processes share the
// port, one per core uses both cores of this machine).
// The client is a keep-alive node:http agent (bench/support/http-client.ts).
// Usage: node dist/bench/api/run.js [seconds-per-level] [repeats] [process counts, default 1,2]

const SECONDS = Number(process.argv[2] ?? 5);
const REPEATS = Number(process.argv[3] ?? 1);
const LEVELS = [1, 8, 32, 64];
const PROCESSES = (process.argv[4] ?? "1,2").split(",").map(Number);
const STORED = 10_000;

interface Sample {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  requests: number;
}

/** CPU ms per request by process group. */
type CpuPerRequest = Record<string, number>;

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const medianSample = (xs: Sample[]): Sample => ({
  rps: median(xs.map((x) => x.rps)),
  p50: median(xs.map((x) => x.p50)),
  p99: median(xs.map((x) => x.p99)),
  errors: xs.reduce((a, x) => a + x.errors, 0),
  requests: xs.reduce((a, x) => a + x.requests, 0),
});
const medianCpu = (xs: CpuPerRequest[]): CpuPerRequest =>
  Object.fromEntries(Object.keys(xs[0] ?? {}).map((k) => [k, median(xs.map((x) => x[k] ?? 0))]));

const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;

async function drive(concurrency: number, seconds: number, request: () => Promise<boolean>): Promise<Sample> {
  const latencies: number[] = [];
  let errors = 0;
  const end = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const t = performance.now();
        const ok = await request().catch(() => false);
        latencies.push(performance.now() - t);
        if (!ok) errors++;
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  return {
    rps: latencies.length / seconds,
    p50: pct(latencies, 0.5),
    p99: pct(latencies, 0.99),
    errors,
    requests: latencies.length,
  };
}

interface Level {
  processes: number;
  concurrency: number;
  mix: Sample;
  baseline: Sample;
  ratio: number;
  cpuMs: CpuPerRequest;
}

interface ListTimes {
  processes: number;
  bytes: number;
  p50: number;
  p99: number;
  afterWrite: { p50: number; p99: number };
}

async function main(): Promise<void> {
  const db = await createTestDatabase();
  const sql = new pg.Client({ connectionString: db.url });
  await sql.connect();
  process.stderr.write(`seeding ${STORED} configs…\n`);
  await sql.query(
    `INSERT INTO configs (id, name, endpoint, event_types, secret, updated_at)
     SELECT gen_random_uuid(), 'bench-' || i, 'https://receiver.test/hook/' || i,
            ARRAY['ledger.committed_transactions', 'payments.*'], encode(decode(substr(md5(random()::text) || md5(random()::text), 1, 48), 'hex'), 'base64'),
            now() - make_interval(secs => i)
       FROM generate_series(1, $1) AS i`,
    [STORED],
  );
  const ids: string[] = (await sql.query("SELECT id FROM configs")).rows.map((r) => r.id);

  const sample = JSON.stringify({
    data: { id: ids[0], endpoint: "https://receiver.test/hook/1", eventTypes: ["a.b"] },
  });
  const floor = createServer((_req, res) =>
    res.writeHead(200, { "content-type": "application/json" }).end(sample),
  );
  await new Promise<void>((r) => floor.listen(0, "127.0.0.1", r));
  const floorClient = httpClient(
    `http://127.0.0.1:${(floor.address() as AddressInfo).port}`,
    Math.max(...LEVELS),
  );
  const baseline = async () => (await floorClient.request("GET", "/configs/x")).status === 200;
  const [temporalPid] = await (await testTemporal()).pids();

  const pick = () => ids[Math.floor(Math.random() * ids.length)]!;
  const body = () =>
    JSON.stringify({ endpoint: `https://receiver.test/${randomUUID()}`, eventTypes: ["ledger.*"] });

  const rows: Level[] = [];
  const lists: ListTimes[] = [];
  for (const processes of PROCESSES) {
    const api = await startWebhooks({
      db,
      args: ["--audit-topic", "", "--log-level", "info", "--processes", String(processes)],
      // e.g. BENCH_SERVER_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" to profile the server.
      nodeArgs: process.env.BENCH_SERVER_NODE_ARGS?.split(" ").filter(Boolean) ?? [],
    });
    await api.process.waitForOutput("webhooks API listening", 60_000);
    const serverPids = new Set([api.process.child.pid!, ...childPids(api.process.child.pid!)]);
    const cpu = new CpuMeter((pid, comm) => {
      if (serverPids.has(pid)) return "api";
      if (pid === process.pid) return "client";
      if (comm === "postgres") return "postgres";
      if (pid === temporalPid) return undefined;
      return "other";
    });
    const perRequest = (used: Record<string, number>, requests: number): CpuPerRequest => ({
      api: (used.api ?? 0) / requests,
      postgres: (used.postgres ?? 0) / requests,
      client: (used.client ?? 0) / requests,
      other: (used.other ?? 0) / requests,
    });
    const client = httpClient(api.url, Math.max(...LEVELS));
    const ok = (a: { status: number }) => a.status === 200;
    const mixed = async () => {
      const r = Math.random();
      return ok(
        r < 0.7
          ? await client.request("GET", `/configs/${pick()}`)
          : r < 0.8
            ? await client.request("GET", `/configs?id=${pick()}`)
            : r < 0.9
              ? await client.request("POST", "/configs", body())
              : await client.request("PUT", `/configs/${pick()}`, body()),
      );
    };

    for (const c of LEVELS) {
      const bases: Sample[] = [];
      const mixes: Sample[] = [];
      const cpus: CpuPerRequest[] = [];
      for (let i = 0; i < REPEATS; i++) {
        bases.push(await drive(c, SECONDS, baseline));
        cpu.start();
        const mix = await drive(c, SECONDS, mixed);
        mixes.push(mix);
        cpus.push(perRequest(cpu.delta(), mix.requests));
      }
      const mix = medianSample(mixes);
      const base = medianSample(bases);
      rows.push({
        processes,
        concurrency: c,
        mix,
        baseline: base,
        ratio: mix.rps / base.rps,
        cpuMs: medianCpu(cpus),
      });
      process.stderr.write(
        `${processes} process(es), concurrency ${c}: ${mix.rps.toFixed(0)} req/s (floor ${base.rps.toFixed(0)})\n`,
      );
    }

    // The unpaged list of every config, one caller at a time: as served between
    // writes (cached), and right after a write (the changed config read and spliced in).
    const listRuns = async (n: number, before?: () => Promise<unknown>) => {
      const times: number[] = [];
      let bytes = 0;
      for (let i = 0; i < n; i++) {
        await before?.();
        const t = performance.now();
        bytes = (await client.request("GET", "/configs")).body.byteLength;
        times.push(performance.now() - t);
      }
      times.sort((a, b) => a - b);
      return { bytes, p50: pct(times, 0.5), p99: pct(times, 0.99) };
    };
    // Back to the 10 000 seeded configs (the mix created more), so the list measures what the target names.
    await sql.query("DELETE FROM configs WHERE name NOT LIKE 'bench-%'");
    // With several processes a caller may reach any of them: every one serves 40 lists between writes.
    const unchanged = await listRuns(40 * REPEATS * processes);
    const afterWrite = await listRuns(20 * REPEATS, () =>
      client.request("PUT", `/configs/${pick()}`, body()),
    );
    lists.push({ processes, bytes: unchanged.bytes, p50: unchanged.p50, p99: unchanged.p99, afterWrite });
    client.close();
    await api.stop();
  }

  console.log(
    `\nconfigs API, ${STORED} configs stored, ${SECONDS}s per level, medians of ${REPEATS} run(s); latency in ms, CPU in ms per request\n`,
  );
  console.log(
    "| processes | concurrency | mix req/s | p50 ms | p99 ms | errors | HTTP floor req/s | ratio to floor | CPU api | CPU postgres | CPU client |",
  );
  console.log("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
  for (const r of rows) {
    console.log(
      `| ${r.processes} | ${r.concurrency} | ${r.mix.rps.toFixed(0)} | ${r.mix.p50.toFixed(2)} | ${r.mix.p99.toFixed(2)} | ${r.mix.errors} | ${r.baseline.rps.toFixed(0)} | ${r.ratio.toFixed(2)} | ${r.cpuMs.api!.toFixed(2)} | ${r.cpuMs.postgres!.toFixed(2)} | ${r.cpuMs.client!.toFixed(2)} |`,
    );
  }
  for (const l of lists) {
    console.log(
      `\nGET /configs (all ${STORED}, ${(l.bytes / 1e6).toFixed(1)} MB), ${l.processes} process(es): p50 ${l.p50.toFixed(1)} ms, p99 ${l.p99.toFixed(1)} ms; ` +
        `right after a write: p50 ${l.afterWrite.p50.toFixed(1)} ms, p99 ${l.afterWrite.p99.toFixed(1)} ms`,
    );
  }

  await mkdir(fromRoot("bench", "results"), { recursive: true });
  const out = fromRoot("bench", "results", "api.json");
  await writeFile(
    out,
    `${JSON.stringify({ date: new Date().toISOString(), seconds: SECONDS, repeats: REPEATS, levels: rows, lists }, null, 2)}\n`,
  );
  console.log(`\nwrote ${out}`);

  floorClient.close();
  floor.close();
  await sql.end();
  await db.drop();
  await stopTestTemporal();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
