import { randomUUID } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import pg from "pg";
import { fromRoot } from "../../common/paths.js";
import { stopTestTemporal, testTemporal } from "../../test/support/temporal.js";
import { startWebhooks } from "../../test/support/webhooks-server.js";
import { CpuMeter } from "../support/cpu-by-process.js";

// bench/api: the configs API under a realistic mix (get 70 %, filtered list 10 %,
// create 10 %, update 10 %) at increasing concurrency with 10 000 configs
// stored, plus the full list of all 10 000. Baseline in the same script: a bare
// node:http server answering a fixed config-sized JSON, i.e. the HTTP floor of
// this machine and this client. Each level runs `repeats` times (floor and mix
// interleaved) and reports medians, plus the CPU each process spent per request
// (from /proc), which a noisy shared machine disturbs far less than throughput.
// Usage: node dist/bench/api/run.js [seconds-per-level] [repeats]

const SECONDS = Number(process.argv[2] ?? 5);
const REPEATS = Number(process.argv[3] ?? 1);
const LEVELS = [1, 8, 32, 64];
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

async function main(): Promise<void> {
  const api = await startWebhooks({
    args: ["--audit-topic", "", "--log-level", "warn"],
    // e.g. BENCH_SERVER_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" to profile the server.
    nodeArgs: process.env.BENCH_SERVER_NODE_ARGS?.split(" ").filter(Boolean) ?? [],
  });
  const url = api.url;
  const sql = new pg.Client({ connectionString: api.db.url });
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
  await sql.end();

  const sample = JSON.stringify({
    data: { id: ids[0], endpoint: "https://receiver.test/hook/1", eventTypes: ["a.b"] },
  });
  const floor = createServer((_req, res) =>
    res.writeHead(200, { "content-type": "application/json" }).end(sample),
  );
  await new Promise<void>((r) => floor.listen(0, "127.0.0.1", r));
  const floorUrl = `http://127.0.0.1:${(floor.address() as AddressInfo).port}/configs/x`;

  const pick = () => ids[Math.floor(Math.random() * ids.length)]!;
  const json = { "content-type": "application/json" };
  const body = () =>
    JSON.stringify({ endpoint: `https://receiver.test/${randomUUID()}`, eventTypes: ["ledger.*"] });
  const mixed = async () => {
    const r = Math.random();
    const res =
      r < 0.7
        ? await fetch(`${url}/configs/${pick()}`)
        : r < 0.8
          ? await fetch(`${url}/configs?id=${pick()}`)
          : r < 0.9
            ? await fetch(`${url}/configs`, { method: "POST", headers: json, body: body() })
            : await fetch(`${url}/configs/${pick()}`, { method: "PUT", headers: json, body: body() });
    await res.arrayBuffer();
    return res.ok;
  };
  const baseline = async () => {
    const res = await fetch(floorUrl);
    await res.arrayBuffer();
    return res.ok;
  };

  const serverPid = api.process.child.pid;
  const temporalPid = (await testTemporal()).process.pid;
  const cpu = new CpuMeter((pid, comm) => {
    if (pid === serverPid) return "api";
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

  const rows: { concurrency: number; mix: Sample; baseline: Sample; ratio: number; cpuMs: CpuPerRequest }[] =
    [];
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
    rows.push({ concurrency: c, mix, baseline: base, ratio: mix.rps / base.rps, cpuMs: medianCpu(cpus) });
    process.stderr.write(`concurrency ${c}: ${mix.rps.toFixed(0)} req/s (floor ${base.rps.toFixed(0)})\n`);
  }

  // The unpaged list of every config, one caller at a time: as served between
  // writes (cached), and right after a write (rendered by PostgreSQL again).
  const listOnce = async (): Promise<{ ms: number; bytes: number }> => {
    const t = performance.now();
    const res = await fetch(`${url}/configs`);
    const bytes = (await res.arrayBuffer()).byteLength;
    return { ms: performance.now() - t, bytes };
  };
  const listRuns = (n: number, before?: () => Promise<unknown>) => async () => {
    const times: number[] = [];
    let bytes = 0;
    for (let i = 0; i < n; i++) {
      await before?.();
      const one = await listOnce();
      times.push(one.ms);
      bytes = one.bytes;
    }
    times.sort((a, b) => a - b);
    return { bytes, p50: pct(times, 0.5), p99: pct(times, 0.99) };
  };
  const write = async () => {
    const res = await fetch(`${url}/configs/${pick()}`, { method: "PUT", headers: json, body: body() });
    await res.arrayBuffer();
  };
  // Back to the 10 000 seeded configs (the mix created more), so the list measures what the target names.
  const trim = new pg.Client({ connectionString: api.db.url });
  await trim.connect();
  await trim.query("DELETE FROM configs WHERE name NOT LIKE 'bench-%'");
  await trim.end();
  const unchanged = await listRuns(40 * REPEATS)();
  const afterWrite = await listRuns(20 * REPEATS, write)();
  const list = {
    configs: STORED,
    bytes: unchanged.bytes,
    p50: unchanged.p50,
    p99: unchanged.p99,
    afterWrite,
  };

  console.log(
    `\nconfigs API, ${STORED} configs stored, ${SECONDS}s per level, medians of ${REPEATS} run(s); latency in ms, CPU in ms per request\n`,
  );
  console.log(
    "| concurrency | mix req/s | p50 ms | p99 ms | errors | HTTP floor req/s | ratio to floor | CPU api | CPU postgres | CPU client |",
  );
  console.log("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
  for (const r of rows) {
    console.log(
      `| ${r.concurrency} | ${r.mix.rps.toFixed(0)} | ${r.mix.p50.toFixed(2)} | ${r.mix.p99.toFixed(2)} | ${r.mix.errors} | ${r.baseline.rps.toFixed(0)} | ${r.ratio.toFixed(2)} | ${r.cpuMs.api!.toFixed(2)} | ${r.cpuMs.postgres!.toFixed(2)} | ${r.cpuMs.client!.toFixed(2)} |`,
    );
  }
  console.log(
    `\nGET /configs (all ${STORED}, ${(list.bytes / 1e6).toFixed(1)} MB): p50 ${list.p50.toFixed(1)} ms, p99 ${list.p99.toFixed(1)} ms; ` +
      `right after a write: p50 ${afterWrite.p50.toFixed(1)} ms, p99 ${afterWrite.p99.toFixed(1)} ms`,
  );

  await mkdir(fromRoot("bench", "results"), { recursive: true });
  const out = fromRoot("bench", "results", "api.json");
  await writeFile(
    out,
    `${JSON.stringify({ date: new Date().toISOString(), seconds: SECONDS, repeats: REPEATS, levels: rows, list }, null, 2)}\n`,
  );
  console.log(`\nwrote ${out}`);

  floor.close();
  await api.stop();
  await stopTestTemporal();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
