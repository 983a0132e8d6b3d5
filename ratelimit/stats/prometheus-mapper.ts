// Statsd name → Prometheus metric name and labels, in the mapping-file style of the
// Prometheus statsd_exporter (PULL_STATS_MAPPER_YAML): a list of `mappings`, each a
// `match` (a glob where `*` matches one dot-separated part, or `match_type: regex`),
// a `name` and `labels` that may use the captured groups `$1`, `$2`, …, an optional
// `match_metric_type` (counter, gauge, observer), `observer_type`/`timer_type`
// (histogram or summary), `buckets`, `scale` and `action: drop`. The first mapping that
// matches wins. Unmapped statistics keep their name with every character Prometheus
// does not allow turned into `_` (`ratelimit.localcache.hitCount` →
// `ratelimit_localcache_hitCount`).

import { parse } from "yaml";
import { expandGroups } from "./tags.js";

export type StatKind = "counter" | "gauge" | "observer";
export type ObserverType = "histogram" | "summary";

export interface MappedMetric {
  name: string;
  labels: Record<string, string>;
  observerType: ObserverType;
  buckets: number[] | undefined;
  /** Timer values (ms) are multiplied by this before they are observed. */
  scale: number;
}

interface Mapping {
  regex: RegExp;
  name: string;
  labels: [string, string][];
  kind: StatKind | undefined;
  observerType: ObserverType;
  buckets: number[] | undefined;
  scale: number;
  drop: boolean;
}

const MAPPING_KEYS = new Set([
  "match",
  "match_type",
  "name",
  "labels",
  "match_metric_type",
  "observer_type",
  "timer_type",
  "buckets",
  "histogram_options",
  "scale",
  "action",
  "help",
  // statsd_exporter options accepted for compatibility; they change nothing here.
  "ttl",
  "summary_options",
  "honor_labels",
  "quantiles",
]);
const DEFAULT_KEYS = new Set([
  "match_type",
  "observer_type",
  "timer_type",
  "buckets",
  "histogram_options",
  "glob_disable_ordering",
  "ttl",
  "summary_options",
  "quantiles",
]);
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

export class MappingError extends Error {}

/** Escapes a statsd name into a valid Prometheus metric name. */
export function escapeMetricName(name: string): string {
  const out = name.replace(/[^a-zA-Z0-9_:]/g, "_");
  return /^[0-9]/.test(out) ? `_${out}` : out;
}

function globToRegex(glob: string): RegExp {
  const parts = glob.split("*").map((p) => p.replace(/[.+?^${}()|[\]\\]/g, "\\$&"));
  return new RegExp(`^${parts.join("([^.]*)")}$`);
}

export class StatsMapper {
  private readonly mappings: Mapping[];
  private readonly cache = new Map<string, MappedMetric | null>();

  constructor(mappings: Mapping[]) {
    this.mappings = mappings;
  }

  /** Parses a mapping document; the error names the mapping and field at fault. */
  static fromYaml(text: string, source: string): StatsMapper {
    const fail = (msg: string): never => {
      throw new MappingError(`${source}: ${msg}`);
    };
    let doc: unknown;
    try {
      doc = parse(text);
    } catch (err) {
      fail(`not valid YAML: ${(err as Error).message.split("\n")[0]}`);
    }
    if (!isObject(doc) || !Array.isArray(doc.mappings)) fail("expected a map with a `mappings` list");
    const top = doc as Record<string, unknown>;
    for (const k of Object.keys(top))
      if (k !== "mappings" && k !== "defaults") fail(`unknown top-level key '${k}'`);
    const defaults = top.defaults ?? {};
    if (!isObject(defaults)) fail("`defaults` must be a map");
    for (const k of Object.keys(defaults as object))
      if (!DEFAULT_KEYS.has(k)) fail(`defaults: unknown key '${k}'`);
    const d = defaults as Record<string, unknown>;
    const defMatchType = oneOf(d.match_type ?? "glob", ["glob", "regex"], "defaults.match_type", fail);
    const defObserver = oneOf(
      d.observer_type ?? d.timer_type ?? "histogram",
      ["histogram", "summary"],
      "defaults.observer_type",
      fail,
    ) as ObserverType;
    const defBuckets = buckets(d, "defaults", fail);

    const mappings = (top.mappings as unknown[]).map((m, i): Mapping => {
      const where = `mappings[${i}]`;
      if (!isObject(m)) fail(`${where}: expected a map`);
      const o = m as Record<string, unknown>;
      for (const k of Object.keys(o)) if (!MAPPING_KEYS.has(k)) fail(`${where}: unknown key '${k}'`);
      if (typeof o.match !== "string" || o.match === "") fail(`${where}.match: required (a string)`);
      const match = o.match as string;
      const matchType = oneOf(o.match_type ?? defMatchType, ["glob", "regex"], `${where}.match_type`, fail);
      let regex: RegExp;
      if (matchType === "glob") {
        if (!/^[a-zA-Z0-9_.*:-]+$/.test(match))
          fail(`${where}.match: ${JSON.stringify(match)} is not a glob (letters, digits, _ - : . and *)`);
        regex = globToRegex(match);
      } else {
        try {
          regex = new RegExp(match);
        } catch (err) {
          fail(`${where}.match: not a regular expression (${(err as Error).message})`);
        }
      }
      const drop = oneOf(o.action ?? "map", ["map", "drop"], `${where}.action`, fail) === "drop";
      if (!drop && (typeof o.name !== "string" || o.name === ""))
        fail(`${where}.name: required (the Prometheus metric name)`);
      const labels: [string, string][] = [];
      if (o.labels !== undefined && o.labels !== null) {
        if (!isObject(o.labels)) fail(`${where}.labels: expected a map of label name to value`);
        for (const [k, v] of Object.entries(o.labels as object)) {
          if (!LABEL_NAME.test(k) || k.startsWith("__")) fail(`${where}.labels: invalid label name '${k}'`);
          if (typeof v !== "string" && typeof v !== "number") fail(`${where}.labels.${k}: expected a string`);
          labels.push([k, String(v)]);
        }
      }
      const kindRaw = o.match_metric_type === "timer" ? "observer" : o.match_metric_type;
      const kind =
        kindRaw === undefined
          ? undefined
          : (oneOf(
              kindRaw,
              ["counter", "gauge", "observer"],
              `${where}.match_metric_type`,
              fail,
            ) as StatKind);
      const observerType = oneOf(
        o.observer_type ?? o.timer_type ?? defObserver,
        ["histogram", "summary"],
        `${where}.observer_type`,
        fail,
      ) as ObserverType;
      const scale = o.scale ?? 1;
      if (typeof scale !== "number" || !Number.isFinite(scale) || scale <= 0)
        fail(`${where}.scale: expected a positive number`);
      return {
        regex: regex!,
        name: (o.name as string) ?? "",
        labels,
        kind,
        observerType,
        buckets: buckets(o, where, fail) ?? defBuckets,
        scale: scale as number,
        drop,
      };
    });
    return new StatsMapper(mappings);
  }

  /**
   * Every label name the mappings give metric `name` (mappings whose name has no `$`).
   * A metric family carries them all, so series with fewer labels (one key level and two)
   * can share one metric name, as they do in the statsd_exporter.
   */
  declaredLabels(name: string): string[] {
    const out = new Set<string>();
    for (const m of this.mappings)
      if (!m.drop && !m.name.includes("$") && escapeMetricName(m.name) === name)
        for (const [k] of m.labels) out.add(k);
    return [...out];
  }

  /** The metric for a statistic; null when a mapping drops it. */
  map(stat: string, kind: StatKind): MappedMetric | null {
    const cacheKey = `${kind}\u0000${stat}`;
    const cached = this.cache.get(cacheKey);
    if (cached !== undefined) return cached;
    let out: MappedMetric | null = {
      name: escapeMetricName(stat),
      labels: {},
      observerType: "histogram",
      buckets: undefined,
      scale: 1,
    };
    for (const m of this.mappings) {
      if (m.kind && m.kind !== kind) continue;
      const match = m.regex.exec(stat);
      if (!match) continue;
      out = m.drop
        ? null
        : {
            name: escapeMetricName(expandGroups(m.name, match)),
            labels: Object.fromEntries(m.labels.map(([k, v]) => [k, expandGroups(v, match)])),
            observerType: m.observerType,
            buckets: m.buckets,
            scale: m.scale,
          };
      break;
    }
    if (this.cache.size > 100_000) this.cache.clear();
    this.cache.set(cacheKey, out);
    return out;
  }
}

/**
 * The built-in mapping (docs/spec-rules.md#pull-statistics). Rule statistics: `domain` and `key1` for one key
 * level; with two or more levels `key2` holds the rest of the stats key (so distinct
 * rules stay distinct series). The response time is observed in seconds unless
 * PULL_STATS_RESPONSE_TIME_AS_MILLISECONDS.
 */
export function defaultMappingYaml(responseTimeAsMilliseconds: boolean): string {
  const ruleStats = ["near_limit", "over_limit", "total_hits", "within_limit", "shadow_mode"];
  let y = "mappings:\n";
  for (const s of ruleStats) {
    y += `  - match: "ratelimit.service.rate_limit.*.*.${s}"\n    name: ratelimit_service_rate_limit_${s}\n    labels: {domain: "$1", key1: "$2"}\n`;
    y += `  - match: '^ratelimit\\.service\\.rate_limit\\.([^.]+)\\.([^.]+)\\.(.+)\\.${s}$'\n    match_type: regex\n    name: ratelimit_service_rate_limit_${s}\n    labels: {domain: "$1", key1: "$2", key2: "$3"}\n`;
  }
  y += `  - match: "ratelimit.service.call.should_rate_limit.*"
    name: ratelimit_service_should_rate_limit_error
    match_metric_type: counter
    labels: {err_type: "$1"}
  - match: "ratelimit_server.*.total_requests"
    name: ratelimit_service_total_requests
    match_metric_type: counter
    labels: {grpc_method: "$1"}
  - match: "ratelimit_server.*.response_time"
    name: ratelimit_service_response_time_seconds
    observer_type: histogram
    scale: ${responseTimeAsMilliseconds ? 1 : 0.001}
    labels: {grpc_method: "$1"}
  - match: "ratelimit.service.config_load_success"
    name: ratelimit_service_config_load_success
    match_metric_type: counter
  - match: "ratelimit.service.config_load_error"
    name: ratelimit_service_config_load_error
    match_metric_type: counter
`;
  return y;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function oneOf(v: unknown, allowed: string[], where: string, fail: (msg: string) => never): string {
  if (typeof v !== "string" || !allowed.includes(v))
    fail(`${where}: expected one of ${allowed.join(", ")}, got ${JSON.stringify(v)}`);
  return v as string;
}

function buckets(
  o: Record<string, unknown>,
  where: string,
  fail: (msg: string) => never,
): number[] | undefined {
  const raw = o.buckets ?? (isObject(o.histogram_options) ? o.histogram_options.buckets : undefined);
  if (raw === undefined) return undefined;
  if (!Array.isArray(raw) || raw.length === 0 || raw.some((b) => typeof b !== "number"))
    fail(`${where}.buckets: expected a non-empty list of numbers`);
  return [...(raw as number[])].sort((a, b) => a - b);
}
