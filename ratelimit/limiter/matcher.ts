// Finds the rule that applies to one request descriptor, and the stats key it is
// counted under. At each level the exact `key_value` wins, then the first wildcard
// entry (config order) whose pattern matches, then the entry with the key alone.
// A rule applies only at the level of the descriptor's last entry.

import type { RateLimitDescriptor } from "../../proto/gen/envoy/extensions/common/ratelimit/v3/ratelimit.js";
import { RateLimitUnit } from "../../proto/gen/envoy/type/v3/ratelimit_unit.js";
import type { DescriptorNode, RateLimitConfig, Unit } from "../config/rules.js";
import type { StatsStore } from "../stats/store.js";
import { sanitizeStatName } from "../stats/store.js";

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
  /** Per entry, the wildcard pattern replacing the runtime value in the cache key (share_threshold). */
  sharePatterns: (string | undefined)[] | undefined;
  /** The rule's metadata (RESPONSE_DYNAMIC_METADATA); none for a limit sent by the caller. */
  metadata: Record<string, unknown> | undefined;
}

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
      return {
        requestsPerUnit: override.requestsPerUnit,
        unit,
        unlimited: false,
        shadowMode: false,
        quotaMode: false,
        name: "",
        replaces: [],
        statsKey: entriesStatsKey(domain, descriptor),
        sharePatterns: undefined,
        metadata: undefined,
      };
    }
  }

  const entries = descriptor.entries;
  if (entries.length === 0) return undefined;
  let level = domainConfig.level;
  let node: DescriptorNode | undefined;
  const path: { node: DescriptorNode; how: "exact" | "wildcard" | "key" }[] = [];
  for (const entry of entries) {
    let how: "exact" | "wildcard" | "key" = "exact";
    node = level.byKey.get(`${entry.key}_${entry.value}`);
    if (!node) {
      how = "wildcard";
      for (const w of level.wildcards) {
        if (w.key === entry.key && wildcardMatch(w.wildcardParts!, entry.value)) {
          node = w;
          break;
        }
      }
    }
    if (!node) {
      how = "key";
      node = level.byKey.get(entry.key);
    }
    if (!node) return undefined;
    path.push({ node, how });
    level = node.level;
  }
  const rule = node!.limit;
  if (!rule) return undefined;

  // Stat names follow the reference service exactly (dashboards are built on them),
  // quirks included: see "Statistic names" in ratelimit/README.md.
  let statsKey = rule.fullKey;
  let sharePatterns: (string | undefined)[] | undefined;
  let custom = false;
  for (let i = 0; i < path.length; i++) {
    const p = path[i]!;
    // A shared counter only when the value was matched through the wildcard itself.
    if (p.node.shareThreshold && p.how === "wildcard") {
      sharePatterns ??= new Array(path.length).fill(undefined);
      sharePatterns[i] = p.node.value;
    }
    if (p.node.valueToMetric) custom = true;
  }
  const leaf = path[path.length - 1]!.node;
  if (leaf.detailedMetric) {
    // The request's own values, except where a shared wildcard keeps its pattern. Without
    // any shared wildcard an empty value still gets its `_` (`<key>_`); with one it does not.
    statsKey = domain;
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i]!;
      const shared = sharePatterns?.[i];
      if (shared !== undefined) statsKey += `.${e.key}_${shared}`;
      else if (!sharePatterns || e.value) statsKey += `.${e.key}_${e.value}`;
      else statsKey += `.${e.key}`;
    }
  } else if (custom) {
    // value_to_metric: the runtime value at its levels; a shared wildcard keeps its whole pattern.
    statsKey = domain;
    for (let i = 0; i < path.length; i++) {
      const { node: n, how } = path[i]!;
      const runtime = entries[i]!.value;
      let part: string;
      if (how === "exact") part = `${n.key}_${n.value}`;
      else if (how === "wildcard" && (n.shareThreshold || !n.valueToMetric)) part = `${n.key}_${n.value}`;
      else if (n.valueToMetric && runtime) part = `${n.key}_${runtime}`;
      else part = n.key;
      statsKey += `.${part}`;
    }
  }
  return {
    requestsPerUnit: rule.requestsPerUnit,
    unit: rule.unit,
    unlimited: rule.unlimited,
    shadowMode: rule.shadowMode,
    quotaMode: rule.quotaMode,
    name: rule.name,
    replaces: rule.replaces,
    statsKey,
    sharePatterns,
    metadata: rule.metadata,
  };
}
