// The fast path's gRPC framing (ratelimit/server/grpc-framing.ts) on its own: a request
// message put together from chunks cut anywhere reads as ts-proto's encoding of it, the
// answer's frame carries ts-proto's bytes behind a correct prefix, grpc-timeout in every
// unit, and each malformed body with its status code.

import { expect } from "chai";
import {
  RateLimitResponse_Code as Code,
  RateLimitRequest,
  RateLimitResponse,
} from "../../proto/gen/envoy/service/ratelimit/v3/rls.js";
import {
  CallError,
  frameMessage,
  grpcTimeoutMs,
  Status,
  UnaryMessageReader,
} from "../../ratelimit/server/grpc-framing.js";
import { decodeRequest } from "../../ratelimit/server/request-decoding.js";
import { encodeResponse } from "../../ratelimit/server/response-encoding.js";
import { request } from "./harness.js";

const METHOD = "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit";
const message = Buffer.from(
  RateLimitRequest.encode(
    request(
      "framing",
      [
        [
          ["k", "v"],
          ["user", "alice"],
        ],
        [["path", "/a/b"]],
      ],
      3,
    ),
  ).finish(),
);
const framed = frameMessage(message);

const codeOf = (fn: () => unknown): number => {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(CallError);
    return (err as CallError).code;
  }
  throw new Error("no error");
};

describe("ratelimit gRPC framing", () => {
  it("frames a message behind a zero flag and its big-endian length", () => {
    expect(framed[0]).to.equal(0);
    expect(framed.readUInt32BE(1)).to.equal(message.length);
    expect(framed.subarray(5).equals(message)).to.equal(true);
  });

  it("reads one message from chunks cut at every pair of places, as ts-proto decodes it", () => {
    const expected = RateLimitRequest.decode(message);
    for (let a = 0; a <= framed.length; a++) {
      for (let b = a; b <= framed.length; b += 3) {
        const reader = new UnaryMessageReader(METHOD);
        for (const chunk of [framed.subarray(0, a), framed.subarray(a, b), framed.subarray(b)])
          reader.push(chunk);
        const { message: read, compressed } = reader.finish();
        expect(compressed).to.equal(false);
        expect(decodeRequest(read), `cut at ${a}, ${b}`).to.deep.equal(expected);
      }
    }
  });

  it("frames the service's encoding of an answer with ts-proto's bytes", () => {
    const status = (code: Code, limitRemaining: number) => ({
      code,
      currentLimit: undefined,
      limitRemaining,
      durationUntilReset: { seconds: 42n, nanos: 0 },
      quota: undefined,
    });
    const answer: RateLimitResponse = {
      overallCode: Code.OVER_LIMIT,
      statuses: [status(Code.OVER_LIMIT, 0), status(Code.OK, 7)],
      responseHeadersToAdd: [{ key: "x-ratelimit-limit", value: "10", rawValue: Buffer.alloc(0) }],
      requestHeadersToAdd: [],
      rawBody: Buffer.alloc(0),
      dynamicMetadata: undefined,
      quota: undefined,
    };
    const frame = frameMessage(encodeResponse(answer));
    expect(frame.subarray(5).equals(Buffer.from(RateLimitResponse.encode(answer).finish()))).to.equal(true);
    expect(frame.readUInt32BE(1)).to.equal(frame.length - 5);
  });

  it("reports the compressed flag", () => {
    const reader = new UnaryMessageReader(METHOD);
    const flagged = Buffer.from(framed);
    flagged[0] = 1;
    reader.push(flagged);
    expect(reader.finish().compressed).to.equal(true);
  });

  it("refuses a body that is not exactly one message within the limit", () => {
    const read = (chunks: Buffer[], max?: number) => () => {
      const reader = new UnaryMessageReader(METHOD, max);
      for (const c of chunks) reader.push(c);
      return reader.finish();
    };
    expect(codeOf(read([]))).to.equal(Status.UNIMPLEMENTED);
    expect(codeOf(read([framed, framed]))).to.equal(Status.UNIMPLEMENTED);
    expect(codeOf(read([Buffer.concat([framed, Buffer.from([0])])]))).to.equal(Status.UNIMPLEMENTED);
    expect(codeOf(read([framed.subarray(0, 3)]))).to.equal(Status.INTERNAL);
    expect(codeOf(read([framed.subarray(0, framed.length - 1)]))).to.equal(Status.INTERNAL);
    expect(codeOf(read([framed], message.length - 1))).to.equal(Status.RESOURCE_EXHAUSTED);
    const badFlag = Buffer.from(framed);
    badFlag[0] = 2;
    expect(codeOf(read([badFlag]))).to.equal(Status.INTERNAL);
    // An empty message is a message (a request with every field at its default).
    expect(read([frameMessage(Buffer.alloc(0))])().message.length).to.equal(0);
  });

  it("reads grpc-timeout in each unit and refuses malformed values with INTERNAL", () => {
    expect(grpcTimeoutMs("2H")).to.equal(7_200_000);
    expect(grpcTimeoutMs("3M")).to.equal(180_000);
    expect(grpcTimeoutMs("5S")).to.equal(5000);
    expect(grpcTimeoutMs("250m")).to.equal(250);
    expect(grpcTimeoutMs("1500u")).to.equal(1.5);
    expect(grpcTimeoutMs("99999999n")).to.be.closeTo(99.999999, 1e-9);
    for (const bad of ["", "5", "m", "123456789S", "5s", " 5S", "5S ", "-5S", "1.5S"]) {
      expect(
        codeOf(() => grpcTimeoutMs(bad)),
        JSON.stringify(bad),
      ).to.equal(Status.INTERNAL);
    }
  });
});
