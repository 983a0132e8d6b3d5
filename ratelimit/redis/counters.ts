// Counters in Redis: INCRBY + EXPIRE for every key of a decision, pipelined in one
// write on one pooled connection (with the other decisions of its event-loop turn).
// SECOND windows go to the per-second instance when KVSTORE_PERSECOND is on (any
// topology for either store); the main pipeline runs first, then the per-second one.
// In a Redis Cluster the commands are grouped by key (INCRBY and EXPIRE of one key stay
// together on its node) and the groups run KVSTORE_CLUSTER_PIPELINE_PARALLELISM at a
// time, as the reference does.

import type { Logger } from "../../common/logger.js";
import type { CounterOp, CounterStore } from "../limiter/counter-store.js";
import type { KvStoreSettings, Settings } from "../settings/environment.js";
import type { RedisClient } from "./client.js";
import { RedisPool } from "./pool.js";

/** Runs `tasks` with at most `limit` of them in flight; results in order. */
async function bounded<T>(tasks: (() => Promise<T>)[], limit: number): Promise<T[]> {
  if (limit >= tasks.length) return Promise.all(tasks.map((t) => t()));
  const out: T[] = new Array(tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const i = next++;
      out[i] = await tasks[i]!();
    }
  };
  await Promise.all(Array.from({ length: limit }, worker));
  return out;
}

/**
 * INCRBY + EXPIRE of every op at `idx` on one connection, issued in one turn (so they
 * leave in one write), awaited together; the counts after the increments.
 */
function incrementAll(conn: RedisClient, ops: CounterOp[], idx: number[]): Promise<number[]> {
  const pending: Promise<unknown>[] = new Array(idx.length * 2);
  for (let j = 0; j < idx.length; j++) {
    const op = ops[idx[j]!]!;
    pending[2 * j] = conn.incrby(op.key, op.addend);
    pending[2 * j + 1] = conn.expire(op.key, op.expireSeconds);
  }
  return Promise.all(pending).then((replies) => {
    const counts: number[] = new Array(idx.length);
    for (let j = 0; j < idx.length; j++) counts[j] = Number(replies[2 * j]);
    return counts;
  });
}

/** Groups of one key run in parallel in a cluster: 0 means up to the pool size, which also caps it. */
export function clusterParallelism(s: KvStoreSettings): number {
  const p = s.clusterPipelineParallelism;
  return p === 0 ? s.poolSize : Math.min(p, s.poolSize);
}

export class RedisCounterStore implements CounterStore {
  readonly main: RedisPool;
  readonly perSecond: RedisPool | undefined;
  private readonly parallelism = new Map<RedisPool, number>();

  constructor(settings: Settings, logger: Logger) {
    this.main = new RedisPool(settings.kvstore, logger, "main");
    this.parallelism.set(this.main, clusterParallelism(settings.kvstore));
    this.perSecond = settings.kvstorePerSecond
      ? new RedisPool(settings.kvstorePerSecondSettings, logger, "persecond")
      : undefined;
    if (this.perSecond)
      this.parallelism.set(this.perSecond, clusterParallelism(settings.kvstorePerSecondSettings));
  }

  /**
   * Issues `commands(i)` for every index: all in one turn (one pipeline) on a single
   * server or sentinel master; per key with bounded parallelism in a cluster.
   */
  private send<T>(
    pool: RedisPool,
    idx: number[],
    commands: (conn: RedisClient, i: number) => Promise<T>,
  ): Promise<T[]> {
    return pool.with((conn) => {
      if (pool.topology !== "cluster") return Promise.all(idx.map((i) => commands(conn, i)));
      return bounded(
        idx.map((i) => () => commands(conn, i)),
        this.parallelism.get(pool) ?? 1,
      );
    });
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
      // The decision's commands leave in one write with those of the other decisions of
      // the turn (the pool corks the socket; a cluster client groups them per node).
      const counts =
        pool.topology === "cluster"
          ? (await this.send(pool, idx, (conn, i) => incrementAll(conn, ops, [i]))).map((c) => c[0]!)
          : await pool.with((conn) => incrementAll(conn, ops, idx));
      for (let j = 0; j < idx.length; j++) out[idx[j]!] = counts[j]!;
    };
    await run(this.main, mainIdx);
    if (this.perSecond) await run(this.perSecond, secondIdx);
    return out;
  }

  /** The main store's increments started by `fn` share a connection (per-second ones start after an await). */
  together(fn: () => void): void {
    this.main.together(fn);
  }

  async get(keys: { key: string; perSecond: boolean }[]): Promise<number[]> {
    const out: number[] = new Array(keys.length);
    const [mainIdx, secondIdx] = this.split(keys);
    const run = async (pool: RedisPool, idx: number[]) => {
      if (!idx.length) return;
      const replies = await this.send(pool, idx, (conn, i) => conn.get(keys[i]!.key));
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
