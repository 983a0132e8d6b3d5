// The service's own reading of ShouldRateLimit requests and writing of its answers
// (request-decoding.ts, response-encoding.ts) against ts-proto's generated code: the
// same messages from the same bytes, the same bytes for the same answers, the same
// failures for malformed input.

import { BinaryWriter } from "@bufbuild/protobuf/wire";
import { expect } from "chai";
import {
  RateLimitRequest,
  RateLimitResponse,
  RateLimitResponse_Code,
  RateLimitResponse_RateLimit_Unit,
} from "../../proto/gen/envoy/service/ratelimit/v3/rls.js";
import { RateLimitUnit } from "../../proto/gen/envoy/type/v3/ratelimit_unit.js";
import { decodeRequest } from "../../ratelimit/server/request-decoding.js";
import { encodeResponse } from "../../ratelimit/server/response-encoding.js";

const EMPTY = Buffer.alloc(0);

function request(domain: string, entries: [string, string][][], hitsAddend = 0): RateLimitRequest {
  return {
    domain,
    hitsAddend,
    descriptors: entries.map((d) => ({
      entries: d.map(([key, value]) => ({ key, value })),
      limit: undefined,
      hitsAddend: undefined,
    })),
  };
}

const bytes = (r: RateLimitRequest) => Buffer.from(RateLimitRequest.encode(r).finish());

/** Both decoders on `b`: the same message, or the same error. */
function sameDecoding(b: Buffer): void {
  let expected: RateLimitRequest | Error;
  try {
    expected = RateLimitRequest.decode(b);
  } catch (err) {
    expected = err as Error;
  }
  if (expected instanceof Error) expect(() => decodeRequest(b)).to.throw(expected.message);
  else expect(decodeRequest(b)).to.deep.equal(expected);
}

const status = (
  code: RateLimitResponse_Code,
  requestsPerUnit: number,
  remaining: number,
  resetSeconds: bigint,
  name = "",
) => ({
  code,
  currentLimit: { name, requestsPerUnit, unit: RateLimitResponse_RateLimit_Unit.HOUR },
  limitRemaining: remaining,
  durationUntilReset: { seconds: resetSeconds, nanos: 0 },
  quota: undefined,
});

function response(overrides: Partial<RateLimitResponse>): RateLimitResponse {
  return {
    overallCode: RateLimitResponse_Code.OK,
    statuses: [],
    responseHeadersToAdd: [],
    requestHeadersToAdd: [],
    rawBody: EMPTY,
    dynamicMetadata: undefined,
    quota: undefined,
    ...overrides,
  };
}

describe("ratelimit wire codec", () => {
  it("reads plain requests as ts-proto does, repeated texts and changed ones alike", () => {
    const cases = [
      request("bench", [[["k1", "u1"]]]),
      request("bench", [[["k1", "u1"]]]),
      request("bench", [[["k1", "u2"]]]),
      request("bench", [[["k1", "u1"]]], 7),
      request("other", [
        [
          ["k1", "u1"],
          ["k2", ""],
        ],
        [["k3", "a much longer value, /api/v1/things?x=1"]],
      ]),
      request("", []),
      request("d", [[]]),
      request(
        "d",
        Array.from({ length: 40 }, (_, i) => [[`key${i}`, `value${i}`]]),
      ),
    ];
    for (const r of cases) sameDecoding(bytes(r));
    expect(decodeRequest(bytes(cases[2]!)).descriptors[0]!.entries[0]!.value).to.equal("u2");
  });

  it("reads what the fast path leaves to ts-proto the same way", () => {
    const withLimit: RateLimitRequest = request("d", [[["k", "v"]]]);
    withLimit.descriptors[0]!.limit = { requestsPerUnit: 5, unit: RateLimitUnit.MINUTE };
    const withAddend: RateLimitRequest = request("d", [[["k", "v"]]]);
    withAddend.descriptors[0]!.hitsAddend = 0n;
    const unknownField = Buffer.concat([bytes(request("d", [[["k", "v"]]])), Buffer.from([0x20, 0x01])]);
    const huge = new BinaryWriter()
      .uint32(24)
      .uint64(2n ** 40n + 3n)
      .finish();
    for (const b of [
      bytes(withLimit),
      bytes(withAddend),
      bytes(request("dömain", [[["k", "välue"]]])),
      unknownField,
      Buffer.from(huge),
      // Tag 0 and an end-group tag stop ts-proto's reading of a message.
      Buffer.concat([bytes(request("d", [[["k", "v"]]])), Buffer.from([0x00, 0x0a, 0x01, 0x78])]),
      Buffer.from([0x0a, 0x01, 0x61, 0x0c]),
    ]) {
      sameDecoding(b);
    }
  });

  it("fails on malformed requests as ts-proto does", () => {
    const good = bytes(request("bench", [[["k1", "u1"]]]));
    for (let cut = 1; cut < good.length; cut++) sameDecoding(good.subarray(0, cut));
    sameDecoding(Buffer.from([0x12, 0x7f]));
    sameDecoding(Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]));
    sameDecoding(Buffer.from([0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]));
  });

  it("writes the bytes ts-proto writes", () => {
    const header = (key: string, value: string) => ({ key, value, rawValue: EMPTY });
    const cases = [
      response({}),
      response({ statuses: [status(RateLimitResponse_Code.OK, 1_000_000_000, 999_999_999, 1800n)] }),
      response({
        overallCode: RateLimitResponse_Code.OVER_LIMIT,
        statuses: [
          status(RateLimitResponse_Code.OVER_LIMIT, 0, 0, 0n, "free_plan"),
          status(RateLimitResponse_Code.OK, 4_294_967_295, 4_294_967_295, 31_536_000n, "ünïcode"),
          {
            code: RateLimitResponse_Code.OK,
            currentLimit: undefined,
            limitRemaining: 0,
            durationUntilReset: undefined,
            quota: undefined,
          },
        ],
        responseHeadersToAdd: [header("RateLimit-Limit", "10"), header("RateLimit-Reset", "")],
        requestHeadersToAdd: [header("x-ratelimit", "välue")],
      }),
      response({ statuses: Array.from({ length: 3000 }, () => status(1, 60, 59, 59n, "n".repeat(40))) }),
      // Left to ts-proto.
      response({ rawBody: Buffer.from("body") }),
      response({ dynamicMetadata: { domain: "d" } }),
      response({ requestHeadersToAdd: [{ key: "k", value: "", rawValue: Buffer.from("raw") }] }),
      response({ statuses: [{ ...status(1, 1, 1, 1n), durationUntilReset: { seconds: -5n, nanos: 0 } }] }),
    ];
    for (const r of cases) {
      const ours = Buffer.from(encodeResponse(r));
      expect(ours.equals(Buffer.from(RateLimitResponse.encode(r).finish()))).to.equal(true);
    }
  });
});
