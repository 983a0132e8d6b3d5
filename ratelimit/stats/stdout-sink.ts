// USE_PUSH_STATS=false: every STATS_FLUSH_INTERVAL the values that changed since the
// last flush go to standard output as `name: value` lines (as /stats prints them).

import type { StatsStore } from "./store.js";

export function startStdoutStats(stats: StatsStore, intervalMs: number): { close(): void } {
  const last = new Map<string, number>();
  const timer = setInterval(() => {
    let out = "";
    for (const [name, value] of stats.snapshot()) {
      if (last.get(name) !== value) out += `${name}: ${value}\n`;
      last.set(name, value);
    }
    if (out) process.stdout.write(out);
  }, intervalMs);
  timer.unref();
  return { close: () => clearInterval(timer) };
}
