// Counter keys: `<prefix><domain>_<key>_<value>_…<windowStart>`, one per descriptor
// and fixed window. Windows are aligned to the Unix epoch in UTC, so a DAY window
// resets at 00:00 UTC and a WEEK window starts on a Thursday.

import type {
  RateLimitDescriptor,
  RateLimitDescriptor_Entry,
} from "../../proto/gen/envoy/extensions/common/ratelimit/v3/ratelimit.js";
import { UNIT_SECONDS, type Unit } from "../config/rules.js";

export function windowStart(nowSeconds: number, unit: Unit): number {
  const divider = UNIT_SECONDS[unit];
  return Math.floor(nowSeconds / divider) * divider;
}

/** Seconds until the current window ends: 1..divider, never 0. */
export function secondsUntilReset(nowSeconds: number, unit: Unit): number {
  const divider = UNIT_SECONDS[unit];
  return divider - (nowSeconds % divider);
}

/**
 * The last key built for one limit and what it was built from. When many calls count on one
 * limit with the same values (a route's limit, a busy client), the key is built once per
 * window: comparing the entries costs less than building the string, which a Map lookup of
 * the key would also flatten on every call.
 */
export class CacheKeyMemo {
  prefix = "";
  domain = "";
  window = -1;
  /** Each entry's key and counted value, in order. */
  readonly parts: string[] = [];
  key = "";

  matches(prefix: string, domain: string, entries: RateLimitDescriptor_Entry[], window: number): boolean {
    const parts = this.parts;
    if (window !== this.window || parts.length !== 2 * entries.length) return false;
    if (prefix !== this.prefix || domain !== this.domain) return false;
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i]!;
      if (e.key !== parts[2 * i] || e.value !== parts[2 * i + 1]) return false;
    }
    return true;
  }

  remember(
    prefix: string,
    domain: string,
    entries: RateLimitDescriptor_Entry[],
    window: number,
    key: string,
  ) {
    this.prefix = prefix;
    this.domain = domain;
    this.window = window;
    this.parts.length = 2 * entries.length;
    for (let i = 0; i < entries.length; i++) {
      this.parts[2 * i] = entries[i]!.key;
      this.parts[2 * i + 1] = entries[i]!.value;
    }
    this.key = key;
  }
}

/** `memo` (only for a limit without shared wildcards, whose key uses each entry's own value) saves rebuilding it. */
export function cacheKey(
  prefix: string,
  domain: string,
  descriptor: RateLimitDescriptor,
  sharePatterns: (string | undefined)[] | undefined,
  unit: Unit,
  nowSeconds: number,
  memo?: CacheKeyMemo,
): string {
  const window = windowStart(nowSeconds, unit);
  const entries = descriptor.entries;
  if (memo?.matches(prefix, domain, entries, window)) return memo.key;
  let key = `${prefix}${domain}_`;
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!;
    key += `${e.key}_${sharePatterns?.[i] ?? e.value}_`;
  }
  key += window;
  memo?.remember(prefix, domain, entries, window, key);
  return key;
}
