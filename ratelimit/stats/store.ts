// In-process statistics: counters, gauges and timers under dotted names such as
// `ratelimit.service.rate_limit.<statsKey>.total_hits`. Counters hold running totals;
// each sink (standard output, statsd push, Prometheus pull) keeps its own last-seen
// values to compute deltas. Timer samples are handed to observers as they happen,
// because sinks need the individual values (statsd `|ms` lines, histograms).

/** Stat names may not contain `:` or `|`, and the dots of IPv4 addresses become `_`. */
export function sanitizeStatName(name: string): string {
  return name.replace(/[:|]/g, "_").replace(/(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})/g, "$1_$2_$3_$4");
}

export interface TimerSummary {
  count: number;
  sumMs: number;
  maxMs: number;
}

export class StatsStore {
  private readonly counters = new Map<string, number>();
  private readonly gauges = new Map<string, () => number>();
  private readonly timers = new Map<string, TimerSummary>();
  private readonly timingObservers: ((name: string, ms: number) => void)[] = [];

  constructor(readonly enabled = true) {}

  add(name: string, delta: number): void {
    if (!this.enabled) return;
    this.counters.set(name, (this.counters.get(name) ?? 0) + delta);
  }

  inc(name: string): void {
    this.add(name, 1);
  }

  /** A gauge whose value is read when a snapshot is taken. */
  gauge(name: string, read: () => number): void {
    this.gauges.set(name, read);
  }

  timing(name: string, ms: number): void {
    if (!this.enabled) return;
    let t = this.timers.get(name);
    if (!t) {
      t = { count: 0, sumMs: 0, maxMs: 0 };
      this.timers.set(name, t);
    }
    t.count++;
    t.sumMs += ms;
    if (ms > t.maxMs) t.maxMs = ms;
    for (const observe of this.timingObservers) observe(name, ms);
  }

  /** Calls `observe` with every timer sample from now on. */
  onTiming(observe: (name: string, ms: number) => void): void {
    this.timingObservers.push(observe);
  }

  /** Running totals of every counter. */
  counterEntries(): IterableIterator<[string, number]> {
    return this.counters.entries();
  }

  /** The current value of every gauge. */
  gaugeEntries(): [string, number][] {
    return [...this.gauges].map(([name, read]) => [name, read()]);
  }

  counter(name: string): number {
    return this.counters.get(name) ?? 0;
  }

  /** Every value by name, sorted: counters, gauges, and timers as `<name>.count|.sum_ms|.max_ms`. */
  snapshot(): Map<string, number> {
    const out = new Map<string, number>();
    for (const [k, v] of this.counters) out.set(k, v);
    for (const [k, read] of this.gauges) out.set(k, read());
    for (const [k, t] of this.timers) {
      out.set(`${k}.count`, t.count);
      out.set(`${k}.sum_ms`, Number(t.sumMs.toFixed(3)));
      out.set(`${k}.max_ms`, Number(t.maxMs.toFixed(3)));
    }
    return new Map([...out.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }

  /** The snapshot as text, one `name: value` line each. */
  dump(): string {
    let text = "";
    for (const [k, v] of this.snapshot()) text += `${k}: ${v}\n`;
    return text;
  }
}

/** The per-rule statistics, named under `ratelimit.service.rate_limit.<statsKey>.`. */
export class RuleStats {
  readonly totalHits: string;
  readonly overLimit: string;
  readonly nearLimit: string;
  readonly overLimitWithLocalCache: string;
  readonly withinLimit: string;
  readonly shadowMode: string;

  constructor(statsKey: string) {
    const base = `ratelimit.service.rate_limit.${sanitizeStatName(statsKey)}.`;
    this.totalHits = `${base}total_hits`;
    this.overLimit = `${base}over_limit`;
    this.nearLimit = `${base}near_limit`;
    this.overLimitWithLocalCache = `${base}over_limit_with_local_cache`;
    this.withinLimit = `${base}within_limit`;
    this.shadowMode = `${base}shadow_mode`;
  }
}

const ruleStatsCache = new Map<string, RuleStats>();

/** Interned per-rule stat names (a stats key is built per request; its names only once). */
export function ruleStats(statsKey: string): RuleStats {
  let s = ruleStatsCache.get(statsKey);
  if (!s) {
    if (ruleStatsCache.size > 100_000) ruleStatsCache.clear();
    s = new RuleStats(statsKey);
    ruleStatsCache.set(statsKey, s);
  }
  return s;
}

export const SERVICE_STATS = {
  configLoadSuccess: "ratelimit.service.config_load_success",
  configLoadError: "ratelimit.service.config_load_error",
  globalShadowMode: "ratelimit.service.global_shadow_mode",
  redisError: "ratelimit.service.call.should_rate_limit.redis_error",
  serviceError: "ratelimit.service.call.should_rate_limit.service_error",
  totalRequests: "ratelimit_server.ShouldRateLimit.total_requests",
  responseTime: "ratelimit_server.ShouldRateLimit.response_time",
} as const;
