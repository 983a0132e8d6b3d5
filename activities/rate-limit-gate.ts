import * as grpc from "@grpc/grpc-js";
import type { Logger } from "../common/logger.js";
import {
  type RateLimitResponse,
  RateLimitResponse_Code,
  RateLimitServiceClient,
} from "../proto/gen/envoy/service/ratelimit/v3/rls.js";

/** Wait used when the service says OVER_LIMIT without a reset time. */
const DEFAULT_WAIT_MS = 1000;
const CALL_TIMEOUT_MS = 2000;

export interface RateLimitGate {
  /** 0 when the send may go now, else how long to wait before asking again. */
  waitBeforeSend(configId: string, endpointHost: string): Promise<number>;
  close(): void;
}

/**
 * Outbound rate limiting through the rate limit service: before each send it
 * asks ShouldRateLimit in `domain` with two descriptors, `config_id` and
 * `endpoint_host`, so rules can cap one subscription or one receiving host.
 * An unreachable service does not stop deliveries (fail open, logged).
 */
export function createRateLimitGate(address: string, domain: string, logger: Logger): RateLimitGate {
  const client = new RateLimitServiceClient(address, grpc.credentials.createInsecure());
  return {
    async waitBeforeSend(configId, endpointHost) {
      const request = {
        domain,
        descriptors: [
          { entries: [{ key: "config_id", value: configId }], limit: undefined, hitsAddend: undefined },
          {
            entries: [{ key: "endpoint_host", value: endpointHost }],
            limit: undefined,
            hitsAddend: undefined,
          },
        ],
        hitsAddend: 0,
      };
      let response: RateLimitResponse;
      try {
        response = await new Promise((resolve, reject) =>
          client.shouldRateLimit(
            request,
            new grpc.Metadata(),
            { deadline: Date.now() + CALL_TIMEOUT_MS },
            (err, res) => (err ? reject(err) : resolve(res)),
          ),
        );
      } catch (err) {
        logger.warn(
          { address, err: (err as Error).message },
          "rate limit service unavailable: sending anyway",
        );
        return 0;
      }
      if (response.overallCode !== RateLimitResponse_Code.OVER_LIMIT) return 0;
      const waits = response.statuses
        .filter((s) => s.code === RateLimitResponse_Code.OVER_LIMIT && s.durationUntilReset)
        .map(
          (s) => Number(s.durationUntilReset!.seconds) * 1000 + Math.ceil(s.durationUntilReset!.nanos / 1e6),
        );
      return Math.max(100, waits.length ? Math.max(...waits) : DEFAULT_WAIT_MS);
    },
    close: () => client.close(),
  };
}
