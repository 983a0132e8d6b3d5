import { randomUUID } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import pg from "pg";
import { fromRoot } from "../../common/paths.js";
import { stopTestTemporal } from "../../test/support/temporal.js";
import { startWebhooks } from "../../test/support/webhooks-server.js";

// bench/api: the configs API under a realistic mix (get 70 %, filtered list 10 %,
// create 10 %, update 10 %) at increasing concurrency with 10 000 configs
// stored, plus the full list of all 10 000. Baseline in the same script: a bare
// node:http server answering a fixed config-sized JSON, i.e. the HTTP floor of
// this machine and this client. Usage: node dist/bench/api/run.js [seconds-per-level]

const SECONDS = Number(process.argv[2] ?? 5);
const LEVELS = [1, 8, 32, 64];
const STORED = 10_000;

interface Sample {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

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
  return { rps: latencies.length / seconds, p50: pct(latencies, 0.5), p99: pct(latencies, 0.99), errors };
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

  const rows: Record<string, unknown>[] = [];
  for (const c of LEVELS) {
    const base = await drive(c, SECONDS, baseline);
    const mix = await drive(c, SECONDS, mixed);
    rows.push({ concurrency: c, mix, baseline: base, ratio: mix.rps / base.rps });
    process.stderr.write(`concurrency ${c}: ${mix.rps.toFixed(0)} req/s (floor ${base.rps.toFixed(0)})\n`);
  }

  // The unpaged list of every config, one caller at a time.
  const listTimes: number[] = [];
  let listBytes = 0;
  for (let i = 0; i < 40; i++) {
    const t = performance.now();
    const res = await fetch(`${url}/configs`);
    listBytes = (await res.arrayBuffer()).byteLength;
    listTimes.push(performance.now() - t);
  }
  listTimes.sort((a, b) => a - b);
  const list = { configs: STORED, bytes: listBytes, p50: pct(listTimes, 0.5), p99: pct(listTimes, 0.99) };

  console.log(`\nconfigs API, ${STORED} configs stored, ${SECONDS}s per level (medians of latency in ms)\n`);
  console.log("| concurrency | mix req/s | p50 ms | p99 ms | errors | HTTP floor req/s | ratio to floor |");
  console.log("|---:|---:|---:|---:|---:|---:|---:|");
  for (const r of rows as { concurrency: number; mix: Sample; baseline: Sample; ratio: number }[]) {
    console.log(
      `| ${r.concurrency} | ${r.mix.rps.toFixed(0)} | ${r.mix.p50.toFixed(2)} | ${r.mix.p99.toFixed(2)} | ${r.mix.errors} | ${r.baseline.rps.toFixed(0)} | ${r.ratio.toFixed(2)} |`,
    );
  }
  console.log(
    `\nGET /configs (all ${STORED}, ${(list.bytes / 1e6).toFixed(1)} MB): p50 ${list.p50.toFixed(1)} ms, p99 ${list.p99.toFixed(1)} ms`,
  );

  await mkdir(fromRoot("bench", "results"), { recursive: true });
  const out = fromRoot("bench", "results", "api.json");
  await writeFile(
    out,
    `${JSON.stringify({ date: new Date().toISOString(), seconds: SECONDS, levels: rows, list }, null, 2)}\n`,
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
