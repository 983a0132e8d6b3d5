// The node:http2 floor: ShouldRateLimit answered with the same constant as the grpc-js floor
// (floor-answer.ts), but on node:http2 alone, with gRPC's framing done here (5-byte prefix,
// `application/grpc`, `grpc-status` trailer). Plain text, unary only, no deadlines, no
// compression: what a call costs without grpc-js, to tell how much of the grpc-js floor is
// grpc-js itself (floors.ts compares the two).
//
//   node dist/bench/ratelimit/http2-floor-server.js   (prints `listening <port>`)

import http2 from "node:http2";
import { RateLimitRequest, RateLimitResponse } from "../../proto/gen/envoy/service/ratelimit/v3/rls.js";
import { floorAnswer } from "./floor-answer.js";

const server = http2.createServer();
server.on("stream", (stream) => {
  // A generator cancels the calls in flight when it stops: their streams close unanswered.
  stream.on("error", () => {});
  const chunks: Buffer[] = [];
  stream.on("data", (c: Buffer) => chunks.push(c));
  stream.on("end", () => {
    if (stream.closed || stream.destroyed) return;
    const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
    const request = RateLimitRequest.decode(body.subarray(5, 5 + body.readUInt32BE(1)));
    const message = RateLimitResponse.encode(floorAnswer(request)).finish();
    const frame = Buffer.allocUnsafe(5 + message.length);
    frame[0] = 0;
    frame.writeUInt32BE(message.length, 1);
    frame.set(message, 5);
    stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
    stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
    stream.end(frame);
  });
});
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  console.log(`listening ${typeof address === "object" && address ? address.port : 0}`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
