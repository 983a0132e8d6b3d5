// The fixed-window decision for the descriptors of one request: cache keys, the
// local over-limit cache, the optional stop-increment pre-check, one batch of
// increments, then a status and statistics per descriptor, computed as the
// reference does (near limit in float32, strict `>` for over limit).

import type { RateLimitDescriptor } from "../../proto/gen/envoy/extensions/common/ratelimit/v3/ratelimit.js";
import {
  RateLimitResponse_Code,
  type RateLimitResponse_DescriptorStatus,
  RateLimitResponse_RateLimit_Unit,
} from "../../proto/gen/envoy/service/ratelimit/v3/rls.js";
import { UNIT_SECONDS, type Unit } from "../config/rules.js";
import { ruleStats, type StatsStore } from "../stats/store.js";
import { cacheKey, secondsUntilReset } from "./cache-key.js";
import type { CounterOp, CounterStore } from "./counter-store.js";
import type { OverLimitCache } from "./local-cache.js";
import type { MatchedLimit } from "./matcher.js";

export const UNIT_ENUM: Record<Unit, RateLimitResponse_RateLimit_Unit> = {
  SECOND: RateLimitResponse_RateLimit_Unit.SECOND,
  MINUTE: RateLimitResponse_RateLimit_Unit.MINUTE,
  HOUR: RateLimitResponse_RateLimit_Unit.HOUR,
  DAY: RateLimitResponse_RateLimit_Unit.DAY,
  WEEK: RateLimitResponse_RateLimit_Unit.WEEK,
  MONTH: RateLimitResponse_RateLimit_Unit.MONTH,
  YEAR: RateLimitResponse_RateLimit_Unit.YEAR,
};

export interface FixedWindowOptions {
  cacheKeyPrefix: string;
  nearLimitRatio: number;
  expirationJitterMaxSeconds: number;
  stopCacheKeyIncrementWhenOverlimit: boolean;
  localCache: OverLimitCache | undefined;
  /** Clock in milliseconds (tests may pin it). */
  now?: () => number;
  random?: () => number;
}

export function okStatus(): RateLimitResponse_DescriptorStatus {
  return {
    code: RateLimitResponse_Code.OK,
    currentLimit: undefined,
    limitRemaining: 0,
    durationUntilReset: undefined,
    quota: undefined,
  };
}

export class FixedWindowLimiter {
  private readonly now: () => number;
  private readonly random: () => number;

  constructor(
    private readonly store: CounterStore,
    private readonly opts: FixedWindowOptions,
    private readonly stats: StatsStore,
  ) {
    this.now = opts.now ?? Date.now;
    this.random = opts.random ?? Math.random;
  }

  /**
   * One status per descriptor. `limits[i]` is undefined for descriptors without a
   * limit (no rule, unlimited or replaced); `addends[i]` is the hits to add.
   */
  async doLimit(
    domain: string,
    descriptors: RateLimitDescriptor[],
    limits: (MatchedLimit | undefined)[],
    addends: number[],
  ): Promise<RateLimitResponse_DescriptorStatus[]> {
    const nowSeconds = Math.floor(this.now() / 1000);
    const n = descriptors.length;
    const keys: string[] = new Array(n);
    const localHit: boolean[] = new Array(n).fill(false);
    const local = this.opts.localCache;
    let anyLocalHit = false;

    for (let i = 0; i < n; i++) {
      const limit = limits[i];
      if (!limit?.unit) {
        keys[i] = "";
        continue;
      }
      keys[i] = cacheKey(
        this.opts.cacheKeyPrefix,
        domain,
        descriptors[i]!,
        limit.sharePatterns,
        limit.unit,
        nowSeconds,
      );
      this.stats.add(ruleStats(limit.statsKey).totalHits, addends[i]!);
      if (local?.has(keys[i]!)) {
        localHit[i] = true;
        anyLocalHit = true;
      }
    }

    // Which increments to send (STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT changes them).
    // A copy only when the pre-check may change it; otherwise the requested addends are sent.
    const effective = this.opts.stopCacheKeyIncrementWhenOverlimit ? addends.slice() : addends;
    if (this.opts.stopCacheKeyIncrementWhenOverlimit) {
      if (anyLocalHit) effective.fill(0);
      else {
        const toRead: { key: string; perSecond: boolean }[] = [];
        const idx: number[] = [];
        for (let i = 0; i < n; i++) {
          if (keys[i]) {
            toRead.push({ key: keys[i]!, perSecond: limits[i]!.unit === "SECOND" });
            idx.push(i);
          }
        }
        if (toRead.length) {
          const current = await this.store.get(toRead);
          const marked = new Set<number>();
          idx.forEach((i, j) => {
            if (current[j]! + addends[i]! > limits[i]!.requestsPerUnit) marked.add(i);
          });
          if (marked.size) for (const i of idx) if (!marked.has(i)) effective[i] = 0;
        }
      }
    }

    const ops: CounterOp[] = [];
    const opIndex: number[] = [];
    for (let i = 0; i < n; i++) {
      if (!keys[i] || localHit[i]) continue;
      const unit = limits[i]!.unit!;
      const jitterMax = this.opts.expirationJitterMaxSeconds;
      const jitter = jitterMax > 0 ? Math.floor(this.random() * jitterMax) : 0;
      ops.push({
        key: keys[i]!,
        addend: effective[i]!,
        expireSeconds: UNIT_SECONDS[unit] + jitter,
        perSecond: unit === "SECOND",
      });
      opIndex.push(i);
    }
    const results = ops.length ? await this.store.increment(ops) : [];
    const after: number[] = new Array(n).fill(0);
    opIndex.forEach((i, j) => {
      after[i] = results[j]!;
    });

    const statuses: RateLimitResponse_DescriptorStatus[] = new Array(n);
    for (let i = 0; i < n; i++) {
      const limit = limits[i];
      if (!keys[i] || !limit?.unit) {
        statuses[i] = okStatus();
        continue;
      }
      statuses[i] = this.status(limit, keys[i]!, localHit[i]!, after[i]!, addends[i]!, nowSeconds);
    }
    return statuses;
  }

  private status(
    limit: MatchedLimit,
    key: string,
    localHit: boolean,
    after: number,
    hits: number,
    nowSeconds: number,
  ): RateLimitResponse_DescriptorStatus {
    const unit = limit.unit!;
    const L = limit.requestsPerUnit;
    const stats = ruleStats(limit.statsKey);
    const nearThreshold = Math.floor(Math.fround(Math.fround(L) * Math.fround(this.opts.nearLimitRatio)));
    const before = after - hits;
    let code = RateLimitResponse_Code.OK;
    let remaining = 0;

    if (localHit) {
      code = RateLimitResponse_Code.OVER_LIMIT;
      this.stats.add(stats.overLimit, hits);
      this.stats.add(stats.overLimitWithLocalCache, hits);
    } else if (after > L) {
      code = RateLimitResponse_Code.OVER_LIMIT;
      if (before >= L) this.stats.add(stats.overLimit, hits);
      else {
        this.stats.add(stats.overLimit, after - L);
        this.stats.add(stats.nearLimit, L - Math.max(nearThreshold, before));
      }
      this.opts.localCache?.set(key, UNIT_SECONDS[unit]);
    } else {
      remaining = L - after;
      this.stats.add(stats.withinLimit, hits);
      if (after > nearThreshold)
        this.stats.add(stats.nearLimit, before >= nearThreshold ? hits : after - nearThreshold);
    }

    if (limit.shadowMode && code === RateLimitResponse_Code.OVER_LIMIT) {
      code = RateLimitResponse_Code.OK;
      this.stats.add(stats.shadowMode, localHit || before >= L ? hits : after - L);
    }

    return {
      code,
      currentLimit: { requestsPerUnit: L, unit: UNIT_ENUM[unit], name: limit.name },
      limitRemaining: remaining,
      durationUntilReset: { seconds: BigInt(secondsUntilReset(nowSeconds, unit)), nanos: 0 },
      quota: undefined,
    };
  }
}
