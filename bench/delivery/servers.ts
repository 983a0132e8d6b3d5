import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { fromRoot } from "../../common/paths.js";

// bench/delivery/servers: deliveries against the no-op floor of the same shape, on
// the dev server and on the production server (PostgreSQL), in one run. Each
// (server, send mode) pair runs the floor workflows and the deliveries back to
// back in the same sitting, so the ratio deliveries/floor holds on a noisy machine.
// A second ratio is against the floor with a delivery's database and HTTP work: what
// deliveries lose beyond it is the broker, the consumer and the delivery workflow.
// The default send mode, local-first, is measured with the floor of local sends (a fast
// receiver is sent to locally) and printed with its ratio to local.
// Usage: node dist/bench/delivery/servers.js [events=1000] [floor-workflows=400] [rounds=1]

const EVENTS = process.argv[2] ?? "1000";
const FLOOR = process.argv[3] ?? "400";
const ROUNDS = Number(process.argv[4] ?? 1);

/** The floor variant of the same shape as deliveries in each send mode (both start eagerly). */
const FLOOR_VARIANT = { queue: 1, local: 3, "local-first": 3 } as const;
/** The same with a delivery's database and HTTP work (temporal-floor.ts, delivery-io.ts). */
const FLOOR_IO_VARIANT = { queue: 4, local: 5, "local-first": 5 } as const;
/** The default (local-first, sent locally by a fast receiver) against both fixed modes. */
const MODES = ["local-first", "queue", "local"] as const;

function runScript(script: string, args: string[], server: "dev" | "server"): Promise<void> {
  const env = { ...process.env, TEST_TEMPORAL: server === "server" ? "server" : "" };
  const child = spawn(process.execPath, [fromRoot("dist", "bench", "delivery", script), ...args], {
    env,
    stdio: ["ignore", "ignore", "inherit"],
  });
  return new Promise((resolve, reject) =>
    child.once("exit", (code) =>
      code === 0 ? resolve() : reject(new Error(`${script} ${args} exited ${code}`)),
    ),
  );
}

// biome-ignore lint/suspicious/noExplicitAny: the scripts' JSON results, read field by field
const result = (name: string): any => JSON.parse(readFileSync(fromRoot("bench", "results", name), "utf8"));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

async function main(): Promise<void> {
  const rows: Record<string, number | string>[] = [];
  const named = (server: string) => (server === "server" ? "production server" : "dev server");
  for (let round = 0; round < ROUNDS; round++) {
    for (const server of ["dev", "server"] as const) {
      const suffix = server === "server" ? "-server" : "";
      process.stderr.write(`round ${round + 1}: floor on the ${named(server)}…\n`);
      await runScript("temporal-floor.js", [FLOOR], server);
      const floor = result(`delivery-temporal-floor${suffix}.json`).rows;
      for (const mode of MODES) {
        process.stderr.write(
          `round ${round + 1}: deliveries, --send-mode ${mode}, on the ${named(server)}…\n`,
        );
        await runScript("run.js", [EVENTS, "0", mode], server);
        const d = result(`delivery-${mode}${suffix}.json`);
        const f = floor[FLOOR_VARIANT[mode]];
        const fio = floor[FLOOR_IO_VARIANT[mode]];
        const cpu = Object.entries(d.cpuPerDelivery as Record<string, number>);
        const pick = (re: RegExp) => cpu.find(([k]) => re.test(k))?.[1] ?? 0;
        rows.push({
          round,
          server,
          mode,
          deliveries: d.idle.perSecond,
          floor: f.perSecond,
          ratio: d.idle.perSecond / f.perSecond,
          floorIo: fio.perSecond,
          ratioIo: d.idle.perSecond / fio.perSecond,
          pacedRate: d.paced.rate,
          pacedP99: d.paced.p99,
          workerMs: pick(/worker/),
          floorWorkerMs: f.workerMs,
          serverMs: pick(/Temporal/),
          floorServerMs: f.serverMs,
          // Exactly: the production server's own label names PostgreSQL too.
          postgresMs: pick(/^PostgreSQL$/),
          floorPostgresMs: f.postgresMs ?? 0,
          // What the ratio would be if both were bound by CPU alone: every component's CPU per
          // workflow of the floor against every component's per delivery (publisher, receiver
          // and NATS included), steadier than throughput on a machine whose speed drifts.
          cpuRatio:
            (f.workerMs + f.serverMs + (f.postgresMs ?? 0)) / cpu.reduce((sum, [, ms]) => sum + ms, 0),
        });
      }
    }
  }

  console.log(
    `\ndeliveries against the no-op floor of the same shape (${EVENTS} events, ${FLOOR} floor workflows, median of ${ROUNDS} round(s))\n`,
  );
  console.log(
    "| server | send mode | deliveries/s | floor/s | ratio | CPU-cost ratio | floor with a delivery's I/O/s | ratio to it | p99 at half rate | worker CPU ms (floor) | Temporal CPU ms (floor) | PostgreSQL CPU ms (floor) |",
  );
  console.log("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
  const summary: { server: string; mode: string; deliveries: number }[] = [];
  for (const server of ["dev", "server"]) {
    for (const mode of MODES) {
      const rs = rows.filter((r) => r.server === server && r.mode === mode);
      const m = (k: string) => median(rs.map((r) => r[k] as number));
      const s = {
        server,
        mode,
        deliveries: m("deliveries"),
        floor: m("floor"),
        ratio: m("ratio"),
        floorIo: m("floorIo"),
        ratioIo: m("ratioIo"),
        pacedRate: m("pacedRate"),
        pacedP99: m("pacedP99"),
        workerMs: m("workerMs"),
        floorWorkerMs: m("floorWorkerMs"),
        serverMs: m("serverMs"),
        floorServerMs: m("floorServerMs"),
        postgresMs: m("postgresMs"),
        floorPostgresMs: m("floorPostgresMs"),
        cpuRatio: m("cpuRatio"),
      };
      summary.push(s);
      console.log(
        `| ${server === "dev" ? "dev server (SQLite, in memory)" : "production server (PostgreSQL)"} | ${mode} | ${s.deliveries.toFixed(0)} | ${s.floor.toFixed(0)} | ${s.ratio.toFixed(2)} | ${s.cpuRatio.toFixed(2)} | ${s.floorIo.toFixed(0)} | ${s.ratioIo.toFixed(2)} | ${s.pacedP99.toFixed(0)} ms at ${s.pacedRate}/s | ${s.workerMs.toFixed(1)} (${s.floorWorkerMs.toFixed(1)}) | ${s.serverMs.toFixed(1)} (${s.floorServerMs.toFixed(1)}) | ${s.postgresMs.toFixed(1)} (${s.floorPostgresMs.toFixed(1)}) |`,
      );
    }
  }
  for (const server of ["dev", "server"]) {
    const rate = (mode: string) => summary.find((x) => x.server === server && x.mode === mode)!.deliveries;
    console.log(
      `${server === "dev" ? "dev server" : "production server"}: local-first / local = ${(rate("local-first") / rate("local")).toFixed(2)}, local-first / queue = ${(rate("local-first") / rate("queue")).toFixed(2)}`,
    );
  }
  const out = fromRoot("bench", "results", "delivery-servers.json");
  await writeFile(
    out,
    `${JSON.stringify({ date: new Date().toISOString(), events: EVENTS, floor: FLOOR, rounds: rows, summary }, null, 2)}\n`,
  );
  console.log(`\nwrote ${out}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
