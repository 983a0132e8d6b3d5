// The statistics' output, for the one serving process or for the primary of
// RATELIMIT_PROCESSES (which outputs the sum). prom-client is loaded only when pulled.

import type { Logger } from "../../common/logger.js";
import type { Settings } from "../settings/environment.js";
import { StatsdSink } from "../stats/statsd-sink.js";
import { startStdoutStats } from "../stats/stdout-sink.js";
import type { StatsStore } from "../stats/store.js";
import type { Listener } from "./http-server.js";

/**
 * Where statistics go: nowhere (DISABLE_STATS), Prometheus pull (USE_PULL_STATS, which
 * replaces pushing), statsd push (USE_PUSH_STATS, the default) or standard output.
 */
export async function startStatsOutput(
  settings: Settings,
  stats: StatsStore,
  logger: Logger,
): Promise<{ pull?: Listener; close(): Promise<void> }> {
  if (settings.disableStats) return { close: async () => {} };
  if (settings.usePullStats) {
    const { PrometheusStats, startPullServer } = await import("./prometheus-pull.js");
    const prom = new PrometheusStats(stats, settings.pullStatsMapper, logger);
    const pull = await startPullServer(settings.pullStatsAddr, settings.pullStatsPath, prom, logger);
    return { pull, close: () => pull.close() };
  }
  if (settings.useStatsd) {
    const sink = new StatsdSink(
      stats,
      {
        host: settings.statsdHost,
        port: settings.statsdPort,
        flushIntervalMs: settings.statsFlushIntervalMs,
        extraTags: settings.extraTags,
        tagged: settings.useTaggedPushStats,
        mogrifiers: settings.taggedPushStatsMogrifiers,
      },
      logger,
    );
    sink.start();
    return { close: () => sink.close() };
  }
  const out = startStdoutStats(stats, settings.statsFlushIntervalMs);
  return { close: async () => out.close() };
}
