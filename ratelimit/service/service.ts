// ShouldRateLimit: validates the request, finds the rule of every descriptor, drops
// unlimited and replaced rules, asks the fixed-window limiter, then builds the
// overall code, the optional RateLimit-* headers and dynamic metadata, and applies
// the global shadow mode.

import type { HeaderValue } from "../../proto/gen/envoy/config/core/v3/base.js";
import {
  type RateLimitRequest,
  type RateLimitResponse,
  RateLimitResponse_Code,
  type RateLimitResponse_DescriptorStatus,
} from "../../proto/gen/envoy/service/ratelimit/v3/rls.js";
import type { RateLimitConfig } from "../config/rules.js";
import { CacheError } from "../limiter/counter-store.js";
import type { FixedWindowLimiter } from "../limiter/fixed-window.js";
import { getLimit, type MatchedLimit } from "../limiter/matcher.js";
import type { Settings } from "../settings/environment.js";
import { SERVICE_STATS, type StatsStore } from "../stats/store.js";
import { responseMetadata } from "./dynamic-metadata.js";

export const MAX_UINT32 = 4_294_967_295;
/** The empty raw body and header values of every response: one shared, never-written buffer. */
const EMPTY_BYTES = Buffer.alloc(0);
/** The header lists of a response that adds none: shared, so frozen. */
const NO_HEADERS: HeaderValue[] = Object.freeze([]) as unknown as HeaderValue[];

/** A request the service refuses (empty domain, no descriptors, no configuration). */
export class ServiceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ServiceError";
  }
}

type ResponseSettings = Pick<
  Settings,
  | "shadowMode"
  | "quotaMode"
  | "limitResponseHeadersEnabled"
  | "limitLimitHeader"
  | "limitRemainingHeader"
  | "limitResetHeader"
  | "responseDynamicMetadata"
>;

export class RateLimitService {
  private config: RateLimitConfig | undefined;

  constructor(
    private readonly settings: ResponseSettings,
    private readonly limiter: FixedWindowLimiter,
    private readonly stats: StatsStore,
  ) {}

  setConfig(config: RateLimitConfig | undefined): void {
    this.config = config;
  }

  getConfig(): RateLimitConfig | undefined {
    return this.config;
  }

  /** One async function: each one more would cost every call another promise and frame. */
  async shouldRateLimit(request: RateLimitRequest): Promise<RateLimitResponse> {
    try {
      if (request.domain === "") throw new ServiceError("rate limit domain must not be empty");
      const n = request.descriptors.length;
      if (n === 0) throw new ServiceError("rate limit descriptor list must not be empty");
      const config = this.config;
      if (!config) throw new ServiceError("no rate limit configuration loaded");
      const limits: (MatchedLimit | undefined)[] = new Array(n);
      const addends: number[] = new Array(n);
      const unlimited = this.match(config, request, limits, addends);
      const statuses = await this.limiter.doLimit(request.domain, request.descriptors, limits, addends);
      return this.respond(request, statuses, limits, unlimited);
    } catch (err) {
      if (err instanceof CacheError) this.stats.inc(SERVICE_STATS.redisError);
      else this.stats.inc(SERVICE_STATS.serviceError);
      throw err;
    }
  }

  /**
   * Fills the limit of each descriptor (undefined: none, unlimited or replaced) and the hits
   * to add; returns which descriptors are unlimited (undefined when none is).
   */
  private match(
    config: RateLimitConfig,
    request: RateLimitRequest,
    limits: (MatchedLimit | undefined)[],
    addends: number[],
  ): boolean[] | undefined {
    const descriptors = request.descriptors;
    const n = descriptors.length;
    let unlimited: boolean[] | undefined;
    const requestAddend = Math.max(1, request.hitsAddend);
    let replacing: Set<string> | undefined;

    for (let i = 0; i < n; i++) {
      const d = descriptors[i]!;
      // A descriptor's own hits_addend wins, 0 included (check without counting).
      addends[i] =
        d.hitsAddend === undefined
          ? requestAddend
          : Number(d.hitsAddend > 9_007_199_254_740_991n ? 9_007_199_254_740_991n : d.hitsAddend);
      const limit = getLimit(config, request.domain, d, this.stats);
      if (limit) {
        if (limit.replaces.length) {
          replacing ??= new Set();
          for (const name of limit.replaces) replacing.add(name);
        }
        if (limit.unlimited) {
          unlimited ??= new Array(n).fill(false);
          unlimited[i] = true;
          limits[i] = undefined;
          continue;
        }
      }
      limits[i] = limit;
    }
    if (replacing) {
      for (let i = 0; i < n; i++) {
        const name = limits[i]?.name;
        if (name && replacing.has(name)) limits[i] = undefined;
      }
    }
    return unlimited;
  }

  /** The overall code, headers, metadata and global shadow mode around the limiter's statuses. */
  private respond(
    request: RateLimitRequest,
    statuses: RateLimitResponse_DescriptorStatus[],
    limits: (MatchedLimit | undefined)[],
    unlimited: boolean[] | undefined,
  ): RateLimitResponse {
    const n = statuses.length;
    if (unlimited) {
      for (let i = 0; i < n; i++) if (unlimited[i]) statuses[i]!.limitRemaining = MAX_UINT32;
    }

    // Overall: any non-quota descriptor over its limit, or every quota-mode descriptor over.
    let anyOver = false;
    let quotaCount = 0;
    let quotaOver = 0;
    for (let i = 0; i < n; i++) {
      const over = statuses[i]!.code === RateLimitResponse_Code.OVER_LIMIT;
      if (limits[i] && (limits[i]!.quotaMode || this.settings.quotaMode)) {
        quotaCount++;
        if (over) quotaOver++;
      } else if (over) anyOver = true;
    }
    let overallCode =
      anyOver || (quotaCount > 0 && quotaOver === quotaCount)
        ? RateLimitResponse_Code.OVER_LIMIT
        : RateLimitResponse_Code.OK;

    const headers = this.settings.limitResponseHeadersEnabled ? this.headers(statuses, limits) : NO_HEADERS;

    if (overallCode === RateLimitResponse_Code.OVER_LIMIT && this.settings.shadowMode) {
      overallCode = RateLimitResponse_Code.OK;
      this.stats.inc(SERVICE_STATS.globalShadowMode);
    }

    return {
      overallCode,
      statuses,
      responseHeadersToAdd: headers,
      requestHeadersToAdd: NO_HEADERS,
      rawBody: EMPTY_BYTES,
      dynamicMetadata: this.settings.responseDynamicMetadata
        ? responseMetadata(
            request,
            statuses.map((s, i) =>
              unlimited?.[i] || s.code === RateLimitResponse_Code.OVER_LIMIT
                ? undefined
                : limits[i]?.metadata,
            ),
          )
        : undefined,
      quota: undefined,
    };
  }

  /** The RateLimit-* headers of the most restrictive descriptor (the last over-limit one wins). */
  private headers(
    statuses: RateLimitResponse_DescriptorStatus[],
    limits: (MatchedLimit | undefined)[],
  ): HeaderValue[] {
    let chosen: RateLimitResponse_DescriptorStatus | undefined;
    for (const s of statuses) {
      if (s.currentLimit && (!chosen || s.limitRemaining < chosen.limitRemaining)) chosen = s;
    }
    if (!chosen) return NO_HEADERS;
    statuses.forEach((s, i) => {
      const quota = limits[i] && (limits[i]!.quotaMode || this.settings.quotaMode);
      if (s.code === RateLimitResponse_Code.OVER_LIMIT && !quota && s.currentLimit) chosen = s;
    });
    const raw = EMPTY_BYTES;
    return [
      {
        key: this.settings.limitLimitHeader,
        value: String(chosen.currentLimit!.requestsPerUnit),
        rawValue: raw,
      },
      { key: this.settings.limitRemainingHeader, value: String(chosen.limitRemaining), rawValue: raw },
      {
        key: this.settings.limitResetHeader,
        value: String(chosen.durationUntilReset?.seconds ?? 0n),
        rawValue: raw,
      },
    ];
  }
}
