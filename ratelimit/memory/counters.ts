// In-process counters: the embedded default when no key-value store is configured.
// Exact (increments are applied synchronously), but private to one process, so
// several instances of the service do not share quota.

import type { CounterOp, CounterStore } from "../limiter/counter-store.js";

interface Counter {
  value: number;
  expiresAt: number;
}

export class MemoryCounterStore implements CounterStore {
  private readonly counters = new Map<string, Counter>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly now: () => number = Date.now) {
    // Expired windows are dropped lazily on access and by a sweep every few seconds.
    this.sweeper = setInterval(() => this.sweep(), 5000);
    this.sweeper.unref();
  }

  private live(key: string, now: number): Counter | undefined {
    const c = this.counters.get(key);
    if (c && c.expiresAt <= now) {
      this.counters.delete(key);
      return undefined;
    }
    return c;
  }

  async increment(ops: CounterOp[]): Promise<number[]> {
    const now = this.now();
    const out: number[] = new Array(ops.length);
    for (let i = 0; i < ops.length; i++) {
      const op = ops[i]!;
      let c = this.live(op.key, now);
      if (!c) {
        c = { value: 0, expiresAt: 0 };
        this.counters.set(op.key, c);
      }
      c.value += op.addend;
      c.expiresAt = now + op.expireSeconds * 1000;
      out[i] = c.value;
    }
    return out;
  }

  async get(keys: { key: string }[]): Promise<number[]> {
    const now = this.now();
    return keys.map(({ key }) => this.live(key, now)?.value ?? 0);
  }

  connected(): boolean {
    return true;
  }

  get size(): number {
    return this.counters.size;
  }

  sweep(): void {
    const now = this.now();
    for (const [k, c] of this.counters) if (c.expiresAt <= now) this.counters.delete(k);
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
  }
}
