// The grpc-js floor: a gRPC server on @grpc/grpc-js, as ours is, whose ShouldRateLimit
// answers at once with a constant OK response of the same shape as the service's (one
// status per descriptor, with its limit, remaining count and reset). No rules, no
// counters, no statistics: what is left is the per-call cost of grpc-js and node:http2
// in one process, the floor under any decision this service can make.
//
//   node dist/bench/ratelimit/grpc-floor-server.js   (prints `listening <port>`)

import * as grpc from "@grpc/grpc-js";
import {
  type RateLimitRequest,
  type RateLimitResponse,
  RateLimitResponse_Code,
  RateLimitResponse_RateLimit_Unit,
  RateLimitServiceService,
} from "../../proto/gen/envoy/service/ratelimit/v3/rls.js";

const EMPTY = Buffer.alloc(0);

function answer(request: RateLimitRequest): RateLimitResponse {
  return {
    overallCode: RateLimitResponse_Code.OK,
    statuses: request.descriptors.map(() => ({
      code: RateLimitResponse_Code.OK,
      currentLimit: { name: "", requestsPerUnit: 1_000_000_000, unit: RateLimitResponse_RateLimit_Unit.HOUR },
      limitRemaining: 999_999_999,
      durationUntilReset: { seconds: 1800n, nanos: 0 },
      quota: undefined,
    })),
    responseHeadersToAdd: [],
    requestHeadersToAdd: [],
    rawBody: EMPTY,
    dynamicMetadata: undefined,
    quota: undefined,
  };
}

// The service's own server options, so the floor pays for what ours pays for.
const server = new grpc.Server({ "grpc.enable_channelz": 0 });
server.addService(RateLimitServiceService, {
  shouldRateLimit(
    call: grpc.ServerUnaryCall<RateLimitRequest, RateLimitResponse>,
    callback: grpc.sendUnaryData<RateLimitResponse>,
  ) {
    callback(null, answer(call.request));
  },
});
server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, port) => {
  if (err) {
    console.error(`grpc floor: ${err.message}`);
    process.exit(1);
  }
  console.log(`listening ${port}`);
});
process.on("SIGTERM", () => server.tryShutdown(() => process.exit(0)));
