// The in-process cache of keys known to be over their limit for the current window
// (LOCAL_CACHE_SIZE_IN_BYTES; 0 disables it). A hit answers OVER_LIMIT without a
// trip to the counter store. Entries expire with their window; when the byte budget
// is full the oldest entries are evicted first.

import type { StatsStore } from "../stats/store.js";

/** Rough memory cost of one entry besides its key (Map slot, expiry number, string header). */
const ENTRY_OVERHEAD_BYTES = 64;

export class OverLimitCache {
  private readonly entries = new Map<string, number>();
  private bytes = 0;
  hitCount = 0;
  missCount = 0;
  lookupCount = 0;
  overwriteCount = 0;
  evacuateCount = 0;
  expiredCount = 0;

  constructor(
    readonly sizeInBytes: number,
    private readonly now: () => number = Date.now,
  ) {}

  private cost(key: string): number {
    return key.length * 2 + ENTRY_OVERHEAD_BYTES;
  }

  /** True when `key` was marked over limit and its window has not ended. */
  has(key: string): boolean {
    this.lookupCount++;
    const expires = this.entries.get(key);
    if (expires === undefined) {
      this.missCount++;
      return false;
    }
    if (expires <= this.now()) {
      this.delete(key);
      this.expiredCount++;
      this.missCount++;
      return false;
    }
    this.hitCount++;
    return true;
  }

  /** Marks `key` over limit for `ttlSeconds`. */
  set(key: string, ttlSeconds: number): void {
    const cost = this.cost(key);
    if (cost > this.sizeInBytes) return;
    if (this.entries.has(key)) {
      this.overwriteCount++;
      this.delete(key);
    }
    while (this.bytes + cost > this.sizeInBytes && this.entries.size > 0) {
      const oldest = this.entries.keys().next().value as string;
      const expired = (this.entries.get(oldest) ?? 0) <= this.now();
      this.delete(oldest);
      if (expired) this.expiredCount++;
      else this.evacuateCount++;
    }
    this.entries.set(key, this.now() + ttlSeconds * 1000);
    this.bytes += cost;
  }

  private delete(key: string): void {
    if (this.entries.delete(key)) this.bytes -= this.cost(key);
  }

  get entryCount(): number {
    return this.entries.size;
  }

  /** Registers the reference's gauges `ratelimit.localcache.*`. */
  registerStats(stats: StatsStore): void {
    const base = "ratelimit.localcache.";
    stats.gauge(`${base}hitCount`, () => this.hitCount);
    stats.gauge(`${base}missCount`, () => this.missCount);
    stats.gauge(`${base}lookupCount`, () => this.lookupCount);
    stats.gauge(`${base}overwriteCount`, () => this.overwriteCount);
    stats.gauge(`${base}evacuateCount`, () => this.evacuateCount);
    stats.gauge(`${base}expiredCount`, () => this.expiredCount);
    stats.gauge(`${base}entryCount`, () => this.entryCount);
    stats.gauge(`${base}averageAccessTime`, () => 0);
  }
}
