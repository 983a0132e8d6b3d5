// Statistics of a service running as several processes (RATELIMIT_PROCESSES): each
// serving process sends what changed in its StatsStore to the primary a few times a
// second, and the primary keeps the sum in a StatsStore of its own, which feeds every
// output (statsd push, standard output, Prometheus pull, the debug /stats). So the
// outputs see one service, whichever process answered a call, and a restarted
// process's counters continue from the totals instead of starting again at zero.

import type { StatsStore } from "./store.js";

export const STATS_BATCH = "ratelimit:stats";

/** What a serving process sends: counter increments, gauge values, timer samples. */
export interface StatsBatch {
  type: typeof STATS_BATCH;
  counters: [string, number][];
  gauges: [string, number][];
  timings: [string, number[]][];
}

/** Samples kept per timer between two sends; beyond that a send is due at once. */
const MAX_SAMPLES = 20_000;

/** In a serving process: sends the changes of `stats` every `intervalMs` through `send`. */
export class StatsRelay {
  private readonly sent = new Map<string, number>();
  private samples = new Map<string, number[]>();
  private pending = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly stats: StatsStore,
    private readonly send: (batch: StatsBatch) => void,
    intervalMs = 250,
  ) {
    stats.onTiming((name, ms) => {
      let list = this.samples.get(name);
      if (!list) {
        list = [];
        this.samples.set(name, list);
      }
      list.push(ms);
      if (++this.pending >= MAX_SAMPLES) this.flush();
    });
    this.timer = setInterval(() => this.flush(), intervalMs);
    this.timer.unref();
  }

  flush(): void {
    const counters: [string, number][] = [];
    for (const [name, total] of this.stats.counterEntries()) {
      const delta = total - (this.sent.get(name) ?? 0);
      if (delta === 0) continue;
      counters.push([name, delta]);
      this.sent.set(name, total);
    }
    const timings = [...this.samples];
    this.samples = new Map();
    this.pending = 0;
    this.send({ type: STATS_BATCH, counters, gauges: this.stats.gaugeEntries(), timings });
  }

  /** Sends what is left and stops. */
  close(): void {
    clearInterval(this.timer);
    this.flush();
  }
}

/** In the primary: the sum of every serving process's statistics in `store`. */
export class MergedStats {
  /** The latest gauge values of each process, by process id. */
  private readonly gauges = new Map<number, Map<string, number>>();
  private readonly registered = new Set<string>();

  constructor(readonly store: StatsStore) {}

  apply(processId: number, batch: StatsBatch): void {
    for (const [name, delta] of batch.counters) this.store.add(name, delta);
    for (const [name, samples] of batch.timings) for (const ms of samples) this.store.timing(name, ms);
    let own = this.gauges.get(processId);
    if (!own) {
      own = new Map();
      this.gauges.set(processId, own);
    }
    for (const [name, value] of batch.gauges) {
      own.set(name, value);
      if (this.registered.has(name)) continue;
      this.registered.add(name);
      this.store.gauge(name, () => {
        let sum = 0;
        for (const values of this.gauges.values()) sum += values.get(name) ?? 0;
        return sum;
      });
    }
  }

  /** A process that ended no longer contributes to the gauges (its counters stay in the totals). */
  forget(processId: number): void {
    this.gauges.delete(processId);
  }
}
