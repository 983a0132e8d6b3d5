// The grpc-js floor: a gRPC server on @grpc/grpc-js, as ours is, whose ShouldRateLimit
// answers at once with a constant OK response of the same shape as the service's (one
// status per descriptor, with its limit, remaining count and reset). No rules, no
// counters, no statistics: what is left is the per-call cost of grpc-js and node:http2
// in one process, the floor under any decision this service can make.
// With a process count, the same server runs as that many node:cluster processes on one
// port, as the service runs its serving processes: the floor of the default process count.
//
//   node dist/bench/ratelimit/grpc-floor-server.js [processes]   (prints `listening <port>`)

import cluster from "node:cluster";
import * as grpc from "@grpc/grpc-js";
import {
  type RateLimitRequest,
  type RateLimitResponse,
  RateLimitServiceService,
} from "../../proto/gen/envoy/service/ratelimit/v3/rls.js";
import { freePort } from "../../test/support/ports.js";
import { floorAnswer } from "./floor-answer.js";

// The service's own server options, so the floor pays for what ours pays for.
function serve(port: number): void {
  const server = new grpc.Server({ "grpc.enable_channelz": 0 });
  server.addService(RateLimitServiceService, {
    shouldRateLimit(
      call: grpc.ServerUnaryCall<RateLimitRequest, RateLimitResponse>,
      callback: grpc.sendUnaryData<RateLimitResponse>,
    ) {
      callback(null, floorAnswer(call.request));
    },
  });
  server.bindAsync(`127.0.0.1:${port}`, grpc.ServerCredentials.createInsecure(), (err, bound) => {
    if (err) {
      console.error(`grpc floor: ${err.message}`);
      process.exit(1);
    }
    if (cluster.isPrimary) console.log(`listening ${bound}`);
    else process.send?.("ready");
  });
  process.on("SIGTERM", () => server.tryShutdown(() => process.exit(0)));
}

const processes = Number(process.argv[2] ?? 1);
if (!Number.isInteger(processes) || processes < 1) {
  console.error(`grpc floor: the process count must be a positive integer, got ${process.argv[2]}`);
  process.exit(2);
}
if (cluster.isWorker) serve(Number(process.env.FLOOR_PORT));
else if (processes === 1) serve(0);
else {
  // One port chosen here for all of them: cluster processes each asking for port 0 would not share one.
  const port = await freePort();
  let ready = 0;
  for (let i = 0; i < processes; i++) {
    cluster.fork({ FLOOR_PORT: String(port) }).on("message", () => {
      if (++ready === processes) console.log(`listening ${port}`);
    });
  }
  cluster.on("exit", (_w, code) => {
    console.error(`grpc floor: a process exited (${code})`);
    process.exit(1);
  });
  process.on("SIGTERM", () => {
    cluster.removeAllListeners("exit");
    for (const w of Object.values(cluster.workers ?? {})) w?.kill("SIGTERM");
    process.exit(0);
  });
}
