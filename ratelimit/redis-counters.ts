// Counters in Redis: INCRBY + EXPIRE for every key of a decision, pipelined in one
// write on one pooled connection. SECOND windows go to the per-second instance
// when KVSTORE_PERSECOND is on; the main pipeline runs first, then the per-second one.

import type { Redis } from "ioredis";
import type { Logger } from "../common/logger.js";
import type { CounterOp, CounterStore } from "./counter-store.js";
import { RedisPool } from "./redis-pool.js";
import type { Settings } from "./settings.js";

export class RedisCounterStore implements CounterStore {
  readonly main: RedisPool;
  readonly perSecond: RedisPool | undefined;

  constructor(settings: Settings, logger: Logger) {
    this.main = new RedisPool(settings.kvstore, logger, "main");
    this.perSecond = settings.kvstorePerSecond
      ? new RedisPool(settings.kvstorePerSecondSettings, logger, "persecond")
      : undefined;
  }

  /** Splits indices between the main and the per-second store. */
  private split<T extends { perSecond: boolean }>(items: T[]): [number[], number[]] {
    const main: number[] = [];
    const second: number[] = [];
    for (let i = 0; i < items.length; i++) {
      if (this.perSecond && items[i]!.perSecond) second.push(i);
      else main.push(i);
    }
    return [main, second];
  }

  async increment(ops: CounterOp[]): Promise<number[]> {
    const out: number[] = new Array(ops.length);
    const [mainIdx, secondIdx] = this.split(ops);
    const run = async (pool: RedisPool, idx: number[]) => {
      if (!idx.length) return;
      // The commands are issued in one turn of the event loop; ioredis's auto-pipelining
      // sends them in one write (with shared connections, together with other decisions').
      const replies = await pool.with((conn: Redis) => {
        const pending: Promise<unknown>[] = [];
        for (const i of idx) {
          const op = ops[i]!;
          pending.push(conn.incrby(op.key, op.addend), conn.expire(op.key, op.expireSeconds));
        }
        return Promise.all(pending);
      });
      idx.forEach((i, j) => {
        out[i] = Number(replies[2 * j]);
      });
    };
    await run(this.main, mainIdx);
    if (this.perSecond) await run(this.perSecond, secondIdx);
    return out;
  }

  async get(keys: { key: string; perSecond: boolean }[]): Promise<number[]> {
    const out: number[] = new Array(keys.length);
    const [mainIdx, secondIdx] = this.split(keys);
    const run = async (pool: RedisPool, idx: number[]) => {
      if (!idx.length) return;
      const replies = await pool.with((conn: Redis) => Promise.all(idx.map((i) => conn.get(keys[i]!.key))));
      idx.forEach((i, j) => {
        out[i] = replies[j] === null ? 0 : Number(replies[j]);
      });
    };
    await run(this.main, mainIdx);
    if (this.perSecond) await run(this.perSecond, secondIdx);
    return out;
  }

  connected(): boolean {
    return this.main.connected() && (this.perSecond?.connected() ?? true);
  }

  async waitReady(ms: number): Promise<boolean> {
    const [a, b] = await Promise.all([this.main.waitReady(ms), this.perSecond?.waitReady(ms) ?? true]);
    return a && b;
  }

  async close(): Promise<void> {
    await Promise.all([this.main.close(), this.perSecond?.close()]);
  }
}
