// Counter keys: `<prefix><domain>_<key>_<value>_…<windowStart>`, one per descriptor
// and fixed window. Windows are aligned to the Unix epoch in UTC, so a DAY window
// resets at 00:00 UTC and a WEEK window starts on a Thursday.

import type { RateLimitDescriptor } from "../../proto/gen/envoy/extensions/common/ratelimit/v3/ratelimit.js";
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

export function cacheKey(
  prefix: string,
  domain: string,
  descriptor: RateLimitDescriptor,
  sharePatterns: (string | undefined)[] | undefined,
  unit: Unit,
  nowSeconds: number,
): string {
  let key = `${prefix}${domain}_`;
  const entries = descriptor.entries;
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!;
    key += `${e.key}_${sharePatterns?.[i] ?? e.value}_`;
  }
  return key + windowStart(nowSeconds, unit);
}
