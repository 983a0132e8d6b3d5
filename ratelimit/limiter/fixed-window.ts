// The fixed-window decision for the descriptors of one request: cache keys, the
// local over-limit cache, the optional stop-increment pre-check, one batch of
// increments, then a status and statistics per descriptor, computed as the
// reference does (near limit in float32, strict `>` for over limit).

import type { RateLimitDescriptor } from "../../proto/gen/envoy/extensions/common/ratelimit/v3/ratelimit.js";
import {
  RateLimitResponse_Code,
  type RateLimitResponse_DescriptorStatus,
} from "../../proto/gen/envoy/service/ratelimit/v3/rls.js";
import type { Duration } from "../../proto/gen/google/protobuf/duration.js";
import { UNIT_SECONDS, type Unit } from "../config/rules.js";
import type { StatsStore } from "../stats/store.js";
import { cacheKey, secondsUntilReset } from "./cache-key.js";
import type { CounterOp, CounterStore } from "./counter-store.js";
import type { OverLimitCache } from "./local-cache.js";
import type { MatchedLimit } from "./matcher.js";

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

/**
 * The time until the window ends, as answered: one object per unit and second, shared by the
 * answers of that second (read only), so a call does not build one nor its bigint.
 */
class ResetDurations {
  private readonly last = new Map<Unit, { seconds: number; duration: Duration }>();

  get(nowSeconds: number, unit: Unit): Duration {
    const seconds = secondsUntilReset(nowSeconds, unit);
    let last = this.last.get(unit);
    if (last?.seconds !== seconds) {
      last = { seconds, duration: { seconds: BigInt(seconds), nanos: 0 } };
      this.last.set(unit, last);
    }
    return last.duration;
  }
}

export class FixedWindowLimiter {
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly resets = new ResetDurations();

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
    // "" for a descriptor without a counter.
    const keys: string[] = new Array(n);
    const local = this.opts.localCache;
    let localHit: boolean[] | undefined;
    let counted = 0;

    for (let i = 0; i < n; i++) {
      const limit = limits[i];
      if (!limit?.unit) {
        keys[i] = "";
        continue;
      }
      const key = cacheKey(
        this.opts.cacheKeyPrefix,
        domain,
        descriptors[i]!,
        limit.sharePatterns,
        limit.unit,
        nowSeconds,
        limit.keyMemo,
      );
      keys[i] = key;
      this.stats.add(limit.stats.totalHits, addends[i]!);
      if (local?.has(key)) {
        localHit ??= new Array(n).fill(false);
        localHit[i] = true;
      } else counted++;
    }

    // Which increments to send (STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT changes them).
    // A copy only when the pre-check may change it; otherwise the requested addends are sent.
    let effective = addends;
    if (this.opts.stopCacheKeyIncrementWhenOverlimit) {
      effective = addends.slice();
      if (localHit) effective.fill(0);
      else await this.zeroUnlessOver(keys, limits, addends, effective);
    }

    // The counts after the increments, by descriptor (0 where nothing was counted).
    const after: number[] = new Array(n).fill(0);
    if (counted > 0) {
      const ops: CounterOp[] = new Array(counted);
      const jitterMax = this.opts.expirationJitterMaxSeconds;
      for (let i = 0, j = 0; i < n; i++) {
        if (!keys[i] || localHit?.[i]) continue;
        const unit = limits[i]!.unit!;
        const jitter = jitterMax > 0 ? Math.floor(this.random() * jitterMax) : 0;
        ops[j++] = {
          key: keys[i]!,
          addend: effective[i]!,
          expireSeconds: UNIT_SECONDS[unit] + jitter,
          perSecond: unit === "SECOND",
        };
      }
      const results = await this.store.increment(ops);
      for (let i = 0, j = 0; i < n; i++) if (keys[i] && !localHit?.[i]) after[i] = results[j++]!;
    }

    const statuses: RateLimitResponse_DescriptorStatus[] = new Array(n);
    for (let i = 0; i < n; i++) {
      const limit = limits[i];
      statuses[i] =
        keys[i] && limit?.unit
          ? this.status(limit, keys[i]!, localHit?.[i] ?? false, after[i]!, addends[i]!, nowSeconds)
          : okStatus();
    }
    return statuses;
  }

  /**
   * STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT: reads the counters first; when any descriptor
   * would go over its limit, only those are incremented (the others' `effective` become 0).
   */
  private async zeroUnlessOver(
    keys: string[],
    limits: (MatchedLimit | undefined)[],
    addends: number[],
    effective: number[],
  ): Promise<void> {
    const toRead: { key: string; perSecond: boolean }[] = [];
    const idx: number[] = [];
    for (let i = 0; i < keys.length; i++) {
      if (keys[i]) {
        toRead.push({ key: keys[i]!, perSecond: limits[i]!.unit === "SECOND" });
        idx.push(i);
      }
    }
    if (!toRead.length) return;
    const current = await this.store.get(toRead);
    const marked = new Set<number>();
    idx.forEach((i, j) => {
      if (current[j]! + addends[i]! > limits[i]!.requestsPerUnit) marked.add(i);
    });
    if (marked.size) for (const i of idx) if (!marked.has(i)) effective[i] = 0;
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
    const stats = limit.stats;
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
      currentLimit: limit.currentLimit,
      limitRemaining: remaining,
      durationUntilReset: this.resets.get(nowSeconds, unit),
      quota: undefined,
    };
  }
}
