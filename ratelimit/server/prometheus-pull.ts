// USE_PULL_STATS: statistics exposed for scraping in the Prometheus text format on
// PULL_STATS_ADDR + PULL_STATS_PATH. Each statsd name goes through the mapper (built-in
// or PULL_STATS_MAPPER_YAML); counters are brought up to date at each scrape, timer
// samples are observed as they happen. A metric family carries every label name the
// mappings declare for it; a series sets only its own. A statistic whose type or labels
// do not fit the family already registered under its name is left out (and logged
// once), as the statsd_exporter does with conflicting events.

import http from "node:http";
import { Counter, Gauge, Histogram, type Metric, Registry, Summary } from "prom-client";
import type { Logger } from "../../common/logger.js";
import type { MappedMetric, StatKind, StatsMapper } from "../stats/prometheus-mapper.js";
import type { StatsStore } from "../stats/store.js";
import { type Listener, listen } from "./http-server.js";

interface Family {
  kind: string;
  labelNames: Set<string>;
  metric: Metric<string>;
}

export class PrometheusStats {
  readonly registry = new Registry();
  private readonly families = new Map<string, Family>();
  private readonly lastCounters = new Map<string, number>();
  private readonly conflicts = new Set<string>();

  constructor(
    private readonly stats: StatsStore,
    private readonly mapper: StatsMapper,
    private readonly logger: Logger,
  ) {
    stats.onTiming((name, ms) => {
      const m = this.mapper.map(name, "observer");
      if (!m) return;
      const f = this.family(name, m, m.observerType);
      if (f) (f.metric as Histogram<string> | Summary<string>).observe(m.labels, ms * m.scale);
    });
  }

  /** The metric family for a mapped statistic, created on first use; undefined on a conflict. */
  private family(stat: string, m: MappedMetric, kind: string): Family | undefined {
    let f = this.families.get(m.name);
    if (!f) {
      const labelNames = [
        ...new Set([...this.mapper.declaredLabels(m.name), ...Object.keys(m.labels)]),
      ].sort();
      const conf = {
        name: m.name,
        help: `statsd metric ${stat}`,
        labelNames,
        registers: [this.registry],
      };
      const metric =
        kind === "counter"
          ? new Counter(conf)
          : kind === "gauge"
            ? new Gauge(conf)
            : kind === "summary"
              ? new Summary(conf)
              : new Histogram(m.buckets ? { ...conf, buckets: m.buckets } : conf);
      f = { kind, labelNames: new Set(labelNames), metric };
      this.families.set(m.name, f);
    }
    const fits = Object.keys(m.labels).every((l) => f.labelNames.has(l));
    if (f.kind !== kind || !fits) {
      if (!this.conflicts.has(stat)) {
        this.conflicts.add(stat);
        this.logger.warn(
          {
            stat,
            metric: m.name,
            kind,
            labels: Object.keys(m.labels),
            existing: { kind: f.kind, labels: [...f.labelNames] },
          },
          "statistic left out of the Prometheus output: its metric name is taken by another type or label set",
        );
      }
      return undefined;
    }
    return f;
  }

  private mapped(stat: string, kind: StatKind): [MappedMetric, Family] | undefined {
    const m = this.mapper.map(stat, kind);
    if (!m) return undefined;
    const f = this.family(stat, m, kind);
    return f ? [m, f] : undefined;
  }

  /** Brings counters and gauges up to date and renders every metric. */
  async render(): Promise<string> {
    for (const [name, total] of this.stats.counterEntries()) {
      const delta = total - (this.lastCounters.get(name) ?? 0);
      if (delta === 0 && this.lastCounters.has(name)) continue;
      this.lastCounters.set(name, total);
      const mf = this.mapped(name, "counter");
      if (mf) (mf[1].metric as Counter<string>).inc(mf[0].labels, delta);
    }
    for (const [name, value] of this.stats.gaugeEntries()) {
      const mf = this.mapped(name, "gauge");
      if (mf) (mf[1].metric as Gauge<string>).set(mf[0].labels, value);
    }
    return this.registry.metrics();
  }
}

export async function startPullServer(
  addr: { host: string; port: number },
  path: string,
  prom: PrometheusStats,
  logger: Logger,
): Promise<Listener> {
  const server = http.createServer((req, res) => {
    const url = (req.url ?? "/").split("?")[0];
    if (url !== path || (req.method !== "GET" && req.method !== "HEAD")) {
      res.writeHead(404, { "Content-Type": "text/plain" });
      res.end(`Not Found: statistics are at ${path}\n`);
      return;
    }
    prom.render().then(
      (body) => {
        res.writeHead(200, { "Content-Type": prom.registry.contentType });
        res.end(req.method === "HEAD" ? undefined : body);
      },
      (err: Error) => {
        res.writeHead(500, { "Content-Type": "text/plain" });
        res.end(`Internal Server Error: ${err.message}\n`);
      },
    );
  });
  const l = await listen(server, addr.host, addr.port);
  logger.info({ address: `${addr.host}:${l.port}`, path }, "serving statistics for Prometheus");
  return l;
}
