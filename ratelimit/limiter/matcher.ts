// Finds the rule that applies to one request descriptor, and the stats key it is
// counted under. At each level the exact `key_value` wins, then the first wildcard
// entry (config order) whose pattern matches, then the entry with the key alone.
// A rule applies only at the level of the descriptor's last entry.
// A rule matched without wildcard sharing or runtime stat names gets the same answer on
// every call, made once per rule: the hot path builds nothing for it (docs/performance/ratelimit.md#memory-of-a-serving-process).

import type {
  RateLimitDescriptor,
  RateLimitDescriptor_Entry,
} from "../../proto/gen/envoy/extensions/common/ratelimit/v3/ratelimit.js";
import {
  type RateLimitResponse_RateLimit,
  RateLimitResponse_RateLimit_Unit,
} from "../../proto/gen/envoy/service/ratelimit/v3/rls.js";
import { RateLimitUnit } from "../../proto/gen/envoy/type/v3/ratelimit_unit.js";
import type {
  DescriptorLevel,
  DescriptorNode,
  RateLimitConfig,
  RateLimitRule,
  Unit,
} from "../config/rules.js";
import type { StatsStore } from "../stats/store.js";
import { RuleStats, ruleStats, sanitizeStatName } from "../stats/store.js";
import { CacheKeyMemo } from "./cache-key.js";

export const UNIT_ENUM: Record<Unit, RateLimitResponse_RateLimit_Unit> = {
  SECOND: RateLimitResponse_RateLimit_Unit.SECOND,
  MINUTE: RateLimitResponse_RateLimit_Unit.MINUTE,
  HOUR: RateLimitResponse_RateLimit_Unit.HOUR,
  DAY: RateLimitResponse_RateLimit_Unit.DAY,
  WEEK: RateLimitResponse_RateLimit_Unit.WEEK,
  MONTH: RateLimitResponse_RateLimit_Unit.MONTH,
  YEAR: RateLimitResponse_RateLimit_Unit.YEAR,
};

/** The rule chosen for one descriptor, with what the cache and statistics need. */
export interface MatchedLimit {
  requestsPerUnit: number;
  unit: Unit | undefined;
  unlimited: boolean;
  shadowMode: boolean;
  quotaMode: boolean;
  name: string;
  replaces: string[];
  statsKey: string;
  /** The statistic names of `statsKey`. */
  stats: RuleStats;
  /** Per entry, the wildcard pattern replacing the runtime value in the cache key (share_threshold). */
  sharePatterns: (string | undefined)[] | undefined;
  /** The rule's metadata (RESPONSE_DYNAMIC_METADATA); none for a limit sent by the caller. */
  metadata: Record<string, unknown> | undefined;
  /** The limit as a descriptor status shows it (shared by every answer: read only); none when unlimited. */
  currentLimit: RateLimitResponse_RateLimit | undefined;
  /** The last counter key built for a limit shared by many calls; none for a limit made for one call. */
  keyMemo: CacheKeyMemo | undefined;
}

function matched(
  rule: Omit<RateLimitRule, "fullKey">,
  statsKey: string,
  sharePatterns: (string | undefined)[] | undefined,
  shared: boolean,
): MatchedLimit {
  const unit = rule.unit;
  return {
    requestsPerUnit: rule.requestsPerUnit,
    unit,
    unlimited: rule.unlimited,
    shadowMode: rule.shadowMode,
    quotaMode: rule.quotaMode,
    name: rule.name,
    replaces: rule.replaces,
    statsKey,
    // A limit made for one call looks its names up (interned); a shared one holds its own.
    stats: shared ? new RuleStats(statsKey) : ruleStats(statsKey),
    sharePatterns,
    metadata: rule.metadata,
    currentLimit: unit
      ? { requestsPerUnit: rule.requestsPerUnit, unit: UNIT_ENUM[unit], name: rule.name }
      : undefined,
    keyMemo: shared ? new CacheKeyMemo() : undefined,
  };
}

/** The answer of each rule matched plainly (no sharing, no runtime stat name), made on first use. */
const plainMatches = new WeakMap<RateLimitRule, MatchedLimit>();

/** How an entry matched its node: by `key_value`, by a wildcard value, by the key alone. */
const EXACT = 0;
const WILDCARD = 1;
const KEY = 2;

/** The path of the descriptor being matched: each entry's node and how it matched (reused: matching is synchronous). */
const pathNodes: (DescriptorNode | undefined)[] = [];
const pathHow: number[] = [];

/** `*` matches zero or more characters; the fixed parts must appear in order. */
export function wildcardMatch(parts: string[], text: string): boolean {
  const first = parts[0]!;
  const last = parts[parts.length - 1]!;
  if (!text.startsWith(first)) return false;
  let pos = first.length;
  for (let i = 1; i < parts.length - 1; i++) {
    const p = parts[i]!;
    const at = text.indexOf(p, pos);
    if (at < 0) return false;
    pos = at + p.length;
  }
  return text.length - last.length >= pos && text.endsWith(last);
}

const OVERRIDE_UNITS: Partial<Record<RateLimitUnit, Unit>> = {
  [RateLimitUnit.SECOND]: "SECOND",
  [RateLimitUnit.MINUTE]: "MINUTE",
  [RateLimitUnit.HOUR]: "HOUR",
  [RateLimitUnit.DAY]: "DAY",
  [RateLimitUnit.MONTH]: "MONTH",
  [RateLimitUnit.YEAR]: "YEAR",
};

function entriesStatsKey(domain: string, descriptor: RateLimitDescriptor): string {
  let key = domain;
  for (const e of descriptor.entries) key += e.value ? `.${e.key}_${e.value}` : `.${e.key}`;
  return key;
}

export function getLimit(
  config: RateLimitConfig,
  domain: string,
  descriptor: RateLimitDescriptor,
  stats: StatsStore,
): MatchedLimit | undefined {
  const domainConfig = config.domains.get(domain);
  if (!domainConfig) {
    stats.inc(`ratelimit.service.rate_limit.${sanitizeStatName(domain)}.domain_not_found`);
    return undefined;
  }

  // A limit sent by the caller replaces the configuration tree.
  const override = descriptor.limit;
  if (override) {
    const unit = OVERRIDE_UNITS[override.unit];
    if (unit) {
      const rule = {
        requestsPerUnit: override.requestsPerUnit,
        unit,
        unlimited: false,
        shadowMode: false,
        quotaMode: false,
        name: "",
        replaces: [],
        metadata: undefined,
      };
      return matched(rule, entriesStatsKey(domain, descriptor), undefined, false);
    }
  }

  const entries = descriptor.entries;
  const depth = entries.length;
  if (depth === 0) return undefined;
  const rule = walk(domainConfig.level, entries)?.limit;
  const limit = rule && limitOf(rule, domain, entries);
  // The path must not keep a replaced configuration alive.
  pathNodes.fill(undefined, 0, depth);
  return limit;
}

/** The node of the descriptor's last entry, with the path to it in pathNodes/pathHow; undefined when none matches. */
function walk(level: DescriptorLevel, entries: RateLimitDescriptor_Entry[]): DescriptorNode | undefined {
  let node: DescriptorNode | undefined;
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!;
    let how = EXACT;
    node = level.exact.get(entry.key)?.get(entry.value);
    if (!node) {
      how = WILDCARD;
      for (const w of level.wildcards) {
        if (w.key === entry.key && wildcardMatch(w.wildcardParts!, entry.value)) {
          node = w;
          break;
        }
      }
    }
    if (!node) {
      how = KEY;
      node = level.byKey.get(entry.key);
    }
    if (!node) return undefined;
    pathNodes[i] = node;
    pathHow[i] = how;
    level = node.level;
  }
  return node;
}

/** The limit of `rule`, matched along pathNodes/pathHow by `entries`. */
function limitOf(rule: RateLimitRule, domain: string, entries: RateLimitDescriptor_Entry[]): MatchedLimit {
  const depth = entries.length;
  // Stat names follow the reference service exactly (dashboards are built on them),
  // quirks included: see docs/ratelimit/operations.md#statistics.
  let statsKey = rule.fullKey;
  let sharePatterns: (string | undefined)[] | undefined;
  let custom = false;
  for (let i = 0; i < depth; i++) {
    const n = pathNodes[i]!;
    // A shared counter only when the value was matched through the wildcard itself.
    if (n.shareThreshold && pathHow[i] === WILDCARD) {
      sharePatterns ??= new Array(depth).fill(undefined);
      sharePatterns[i] = n.value;
    }
    if (n.valueToMetric) custom = true;
  }
  const leaf = pathNodes[depth - 1]!;
  if (!sharePatterns && !custom && !leaf.detailedMetric) {
    let plain = plainMatches.get(rule);
    if (!plain) {
      plain = matched(rule, statsKey, undefined, true);
      plainMatches.set(rule, plain);
    }
    return plain;
  }
  if (leaf.detailedMetric) {
    // The request's own values, except where a shared wildcard keeps its pattern. Without
    // any shared wildcard an empty value still gets its `_` (`<key>_`); with one it does not.
    statsKey = domain;
    for (let i = 0; i < depth; i++) {
      const e = entries[i]!;
      const shared = sharePatterns?.[i];
      if (shared !== undefined) statsKey += `.${e.key}_${shared}`;
      else if (!sharePatterns || e.value) statsKey += `.${e.key}_${e.value}`;
      else statsKey += `.${e.key}`;
    }
  } else if (custom) {
    // value_to_metric: the runtime value at its levels; a shared wildcard keeps its whole pattern.
    statsKey = domain;
    for (let i = 0; i < depth; i++) {
      const n = pathNodes[i]!;
      const how = pathHow[i]!;
      const runtime = entries[i]!.value;
      let part: string;
      if (how === EXACT) part = `${n.key}_${n.value}`;
      else if (how === WILDCARD && (n.shareThreshold || !n.valueToMetric)) part = `${n.key}_${n.value}`;
      else if (n.valueToMetric && runtime) part = `${n.key}_${runtime}`;
      else part = n.key;
      statsKey += `.${part}`;
    }
  }
  return matched(rule, statsKey, sharePatterns, false);
}
