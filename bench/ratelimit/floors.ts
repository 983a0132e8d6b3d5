// How much of the grpc-js floor is grpc-js: the same constant ShouldRateLimit answer served
// by grpc-js (grpc-floor-server.ts, as the service serves) and by node:http2 alone with gRPC's
// framing done by hand (http2-floor-server.ts), one process each, driven alternately by h2load
// in a closed loop with the same request. Prints decisions/s, CPU µs per call and peak RSS per
// round, the medians and node-http2 ÷ grpc-js; writes bench/results/ratelimit-floors.json.
//
//   node dist/bench/ratelimit/floors.js [rounds=3] [seconds=6] [concurrency=48]

import { RateLimitRequest } from "../../proto/gen/envoy/service/ratelimit/v3/rls.js";
import { cpuSeconds, maxPeakRssMb } from "../support/proc.js";
import { writeResults } from "../support/results.js";
import { GrpcFloorService } from "./grpc-floor.js";
import { grpcFrame, h2loadMissing, runH2load } from "./h2load.js";

const [rounds = 3, seconds = 6, concurrency = 48] = process.argv.slice(2).map(Number);
const SERVERS = ["grpc-js", "node-http2"] as const;
type Server = (typeof SERVERS)[number];
interface Row {
  round: number;
  server: Server;
  decisionsPerS: number;
  cpuUsPerCall: number;
  peakRssMb: number;
}

const frame = grpcFrame(
  RateLimitRequest.encode({
    domain: "bench",
    hitsAddend: 0,
    descriptors: [{ entries: [{ key: "k1", value: "u1" }], limit: undefined, hitsAddend: undefined }],
  }).finish(),
);

async function measure(round: number, server: Server): Promise<Row> {
  const floor = new GrpcFloorService(1, undefined, server);
  await floor.ready();
  try {
    const plan = { address: floor.address, connections: 4, concurrency };
    await runH2load({ ...plan, seconds: 2 }, frame); // warm-up, not measured
    const pids = floor.pids();
    const cpuBefore = cpuSeconds(pids);
    const log = await runH2load({ ...plan, seconds }, frame);
    const calls = log.latenciesMs.length;
    return {
      round,
      server,
      decisionsPerS: Math.round(calls / seconds),
      cpuUsPerCall: Math.round(((cpuSeconds(pids) - cpuBefore) * 1e6) / Math.max(1, calls)),
      peakRssMb: Math.round(maxPeakRssMb(pids) * 10) / 10,
    };
  } finally {
    await floor.stop();
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const missing = await h2loadMissing();
if (missing) {
  console.log(`skipping: ${missing}`);
  process.exit(0);
}
const rows: Row[] = [];
for (let round = 1; round <= rounds; round++) {
  // Alternated, the first server changing each round, so a drift in the machine's load hits both.
  const order = round % 2 ? SERVERS : [...SERVERS].reverse();
  for (const server of order) {
    rows.push(await measure(round, server));
    console.log(JSON.stringify(rows.at(-1)));
  }
}
const summary = SERVERS.map((server) => {
  const mine = rows.filter((r) => r.server === server);
  return {
    server,
    decisionsPerS: median(mine.map((r) => r.decisionsPerS)),
    cpuUsPerCall: median(mine.map((r) => r.cpuUsPerCall)),
    peakRssMb: median(mine.map((r) => r.peakRssMb)),
  };
});
const ratios = rows
  .filter((r) => r.server === "node-http2")
  .map(
    (r) => r.decisionsPerS / rows.find((g) => g.round === r.round && g.server === "grpc-js")!.decisionsPerS,
  );
console.log(
  `\nfloors, one process each, closed loop at concurrency ${concurrency} over 4 connections, medians of ${rounds} rounds of ${seconds} s`,
);
console.table(summary);
console.log(
  `node-http2 ÷ grpc-js decisions/s per round: ${ratios.map((r) => r.toFixed(2)).join(", ")} (median ${median(ratios).toFixed(2)})`,
);
writeResults("ratelimit-floors", { rounds, seconds, concurrency, rows, summary, ratios });
