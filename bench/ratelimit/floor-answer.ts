// The floors' constant answer to ShouldRateLimit: OK, one status per descriptor, with the
// limit, remaining count and reset the service's answers carry (so it costs as much to encode).

import {
  type RateLimitRequest,
  type RateLimitResponse,
  RateLimitResponse_Code,
  RateLimitResponse_RateLimit_Unit,
} from "../../proto/gen/envoy/service/ratelimit/v3/rls.js";

const EMPTY = Buffer.alloc(0);

export function floorAnswer(request: RateLimitRequest): RateLimitResponse {
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
