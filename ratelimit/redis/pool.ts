// A pool of Redis connections (ioredis). The decisions made in one event-loop turn take
// one connection together: their commands leave in one write at the turn's end, and the
// connection goes back once all their replies are in. A decision in a later turn, while
// that connection still waits, takes another. When every connection is busy,
// KVSTORE_POOL_ON_EMPTY_BEHAVIOR decides: WAIT blocks until one is free;
// CREATE waits KVSTORE_POOL_ON_EMPTY_WAIT_DURATION, then opens an extra connection
// (closed again when the pool is full; at most KVSTORE_POOL_SIZE extra connections at
// once); ERROR waits as long, then fails. A decision that had to wait uses its
// connection alone.
// With KVSTORE_PIPELINE_WINDOW > 0 connections are shared instead (no pool rules): the
// turn's decisions use the next connection in turn, whatever it still waits for.
// `together` lends one connection to several increments for one synchronous call and
// writes as soon as it returns (the coalesced batches, sent from a setImmediate callback
// where the turn's own end is a whole loop iteration away).
// One write: the socket is corked while the turn's decisions issue their commands and
// uncorked after, so Node writes them with one writev. This is
// what ioredis's auto-pipelining achieves too, but without its Pipeline object and
// promise chain per batch, whose garbage survived into the old generation and caused
// the mark-compact pauses that set the p99 (docs/performance/ratelimit.md#where-the-p99-came-from). A cluster client keeps
// ioredis's auto-pipelining, which groups commands by node.
// A "connection" is one client of the store's topology (client.ts): with
// KVSTORE_TYPE=cluster each pooled client holds a connection to every node.

import type { Duplex } from "node:stream";
import { Cluster } from "ioredis";
import type { Logger } from "../../common/logger.js";
import { CacheError } from "../limiter/counter-store.js";
import { describeAddress, parseRedisAddress, type RedisAddress } from "../settings/addresses.js";
import type { KvStoreSettings } from "../settings/environment.js";
import {
  clientConnected,
  probeCluster,
  type RedisClient,
  reconnectDelay,
  redisClientFactory,
} from "./client.js";

interface Waiter {
  resolve: (conn: RedisClient) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout | undefined;
}

/** A client of one Redis server (a cluster client pipelines per node itself). */
type PlainClient = Exclude<RedisClient, Cluster>;

/** A connection lent to the calls of one turn or one `together` call (open until that ends). */
interface Pinned {
  conn: PlainClient;
  users: number;
  open: boolean;
}

export class RedisPool {
  private readonly idle: RedisClient[] = [];
  private readonly all = new Set<RedisClient>();
  private readonly overflow = new Set<RedisClient>();
  private readonly waiters: Waiter[] = [];
  private readonly create: () => RedisClient;
  readonly topology: RedisAddress["type"];
  readonly shared: boolean;
  private nextShared = 0;
  private rotating = false;
  /** Sockets corked for the current turn (shared connections), uncorked at its end. */
  private readonly corkedStreams: Duplex[] = [];
  /** The connection that every `with` inside `together` uses, and how many of them still run on it. */
  private pinned: Pinned | undefined;
  /** The connection that the calls of the current event-loop turn share (pooled, not shared, connections). */
  private turn: Pinned | undefined;
  private closed = false;
  lastError = "";
  readonly address: string;

  constructor(
    private readonly settings: KvStoreSettings,
    private readonly logger: Logger,
    readonly label: string,
  ) {
    const address =
      settings.address ?? parseRedisAddress("KVSTORE_URL", settings.type, settings.socketType, settings.url);
    this.topology = address.type;
    this.create = redisClientFactory(settings, address);
    this.address = describeAddress(address);
    this.shared = settings.pipelineWindowMs > 0;
    for (let i = 0; i < settings.poolSize; i++) this.idle.push(this.open());
  }

  private open(): RedisClient {
    const conn = this.create();
    conn.on("error", (err: Error) => {
      if (err.message !== this.lastError) {
        this.logger.warn(
          { store: this.label, address: this.address, err: err.message },
          "redis connection error",
        );
      }
      this.lastError = err.message;
    });
    conn.on("ready", () => {
      if (this.lastError)
        this.logger.info({ store: this.label, address: this.address }, "redis connection ready");
      this.lastError = "";
    });
    this.reopenWhenEnded(conn);
    this.all.add(conn);
    return conn;
  }

  /**
   * ioredis ends a client for good when one of its connects is cut short: a sentinel
   * client's failover detector disconnects while a reconnect is still asking the
   * sentinels, and the connect fails with "Connection is closed." The pool opens such a
   * client again (a client it let go itself has left `all` first), with the reconnect
   * waits of a lost connection, so the process never stays without Redis after a failover.
   */
  private reopenWhenEnded(conn: RedisClient): void {
    let ends = 0;
    conn.on("ready", () => {
      ends = 0;
    });
    conn.on("end", () => {
      if (this.closed || !this.all.has(conn)) return;
      ends++;
      setTimeout(() => {
        if (this.closed || !this.all.has(conn) || conn.status !== "end") return;
        this.logger.info(
          { store: this.label, address: this.address },
          "redis client ended; opening it again",
        );
        conn.connect().catch(() => {}); // its "error" event already told
      }, reconnectDelay(ends)).unref();
    });
  }

  private probe: { timer: NodeJS.Timeout; healthy: boolean | undefined } | undefined;

  /**
   * True when at least one connection is ready; for a cluster, when every master
   * answered the last PING (probed every second from the first call on, so only
   * when KVSTORE_HEALTH_CHECK_ACTIVE_CONNECTION asks for it).
   */
  connected(): boolean {
    if (this.topology === "cluster" && !this.closed) {
      if (!this.probe) {
        const probe = { timer: setInterval(() => run(), 1000), healthy: undefined as boolean | undefined };
        const run = () => {
          const client = [...this.all].find((c) => c.status === "ready");
          if (!(client instanceof Cluster)) probe.healthy = false;
          else void probeCluster(client).then((ok) => (probe.healthy = ok));
        };
        probe.timer.unref();
        this.probe = probe;
        run();
      }
      if (this.probe.healthy !== undefined) return this.probe.healthy;
    }
    for (const c of this.all) if (clientConnected(c)) return true;
    return false;
  }

  /** Resolves once a connection is ready, or after `ms` (false). */
  async waitReady(ms: number): Promise<boolean> {
    const deadline = Date.now() + ms;
    while (Date.now() < deadline) {
      if (this.connected()) return true;
      await new Promise((r) => setTimeout(r, 25));
    }
    return this.connected();
  }

  acquire(): Promise<RedisClient> | RedisClient {
    if (this.closed) throw new CacheError("redis pool is closed");
    if (this.shared) {
      // Every decision of one event-loop turn uses the same connection, so their
      // commands leave in one write; the next turn moves on to the next connection.
      if (!this.rotating) {
        this.rotating = true;
        setImmediate(() => {
          this.rotating = false;
          this.nextShared++;
          for (const stream of this.corkedStreams.splice(0)) stream.uncork();
        });
      }
      const conns = this.idle;
      for (let i = 0; i < conns.length; i++) {
        const c = conns[(this.nextShared + i) % conns.length]!;
        if (c.status === "ready") return c;
      }
      return conns[this.nextShared % conns.length]!;
    }
    // A ready connection first: after an outage or a failover some reconnect sooner than others.
    for (let i = this.idle.length - 1; i >= 0; i--) {
      if (this.idle[i]!.status === "ready") return this.idle.splice(i, 1)[0]!;
    }
    const conn = this.idle.pop();
    if (conn) return conn;
    const behavior = this.settings.poolOnEmptyBehavior;
    return new Promise<RedisClient>((resolve, reject) => {
      const waiter: Waiter = { resolve, reject, timer: undefined };
      if (behavior !== "WAIT") {
        waiter.timer = setTimeout(() => {
          const i = this.waiters.indexOf(waiter);
          if (i >= 0) this.waiters.splice(i, 1);
          if (behavior === "ERROR") {
            reject(
              new CacheError(
                `redis pool empty: all ${this.settings.poolSize} connections busy for ${this.settings.poolOnEmptyWaitMs}ms`,
              ),
            );
          } else if (this.overflow.size >= this.settings.poolSize) {
            // Under overload every waiter would open its own connection; at most
            // KVSTORE_POOL_SIZE extra connections exist at once, later waiters keep waiting.
            this.waiters.push(waiter);
          } else {
            // The extra connection is handed over once it is ready (or has failed, which `with` reports).
            const extra = this.open();
            this.overflow.add(extra);
            const done = () => {
              extra.off("ready", done);
              extra.off("error", done);
              resolve(extra);
            };
            extra.once("ready", done);
            extra.once("error", done);
          }
        }, this.settings.poolOnEmptyWaitMs);
      }
      this.waiters.push(waiter);
    });
  }

  release(conn: RedisClient): void {
    if (this.shared) return;
    const waiter = this.waiters.shift();
    if (waiter) {
      if (waiter.timer) clearTimeout(waiter.timer);
      waiter.resolve(conn);
      return;
    }
    if (this.overflow.has(conn) && this.idle.length >= this.settings.poolSize) {
      this.overflow.delete(conn);
      this.all.delete(conn);
      conn.disconnect();
      return;
    }
    this.idle.push(conn);
  }

  /**
   * Runs `fn`, and every `with` it makes synchronously shares one connection and leaves
   * in one write as soon as `fn` returns (each keeps its own commands, replies and
   * errors); for calls made where the turn's own write would wait a whole loop
   * iteration (a setImmediate callback). With a connection already lent to the turn,
   * or shared connections, `fn`'s calls join that one; a cluster client groups per node
   * itself; with no idle ready connection each `with` goes its own way.
   */
  together(fn: () => void): void {
    const i =
      this.shared || this.topology === "cluster" || this.pinned || this.turn || this.closed
        ? -1
        : this.idle.findLastIndex((c) => c.status === "ready");
    if (i < 0) {
      fn();
      return;
    }
    const pinned = this.lend(this.idle.splice(i, 1)[0] as PlainClient, 0);
    this.pinned = pinned;
    try {
      fn();
    } finally {
      this.pinned = undefined;
      this.endLending(pinned);
    }
  }

  /** Runs `fn` with a connection of the pool; errors become CacheError with the Redis message. */
  with<T>(fn: (conn: RedisClient) => Promise<T>): Promise<T> {
    const pinned = this.pinned ?? this.turn;
    if (pinned) {
      pinned.users++;
      return this.use(pinned.conn, fn, pinned);
    }
    let conn: RedisClient | Promise<RedisClient>;
    try {
      conn = this.acquire();
    } catch (err) {
      return Promise.reject(err);
    }
    // A connection that had to be waited for serves its one caller.
    if (conn instanceof Promise) return conn.then((c) => this.use(c, fn));
    if (this.shared || conn instanceof Cluster || conn.status !== "ready") return this.use(conn, fn);
    // A connection at hand (the usual case) is used in this turn, without waiting for a
    // microtask, and serves the rest of the turn's calls too.
    return this.use(conn, fn, this.pinForTurn(conn));
  }

  /**
   * Lends `conn` to every `with` of the rest of this event-loop turn: their commands
   * wait in the corked socket and leave in one write when the turn ends (setImmediate;
   * a quiet process loses microseconds). The connection goes back to the pool when the
   * last of them has its replies.
   */
  private pinForTurn(conn: PlainClient): Pinned {
    const turn = this.lend(conn, 1);
    this.turn = turn;
    setImmediate(() => {
      if (this.turn === turn) this.turn = undefined;
      this.endLending(turn);
    });
    return turn;
  }

  /** Lends `conn` (corked, so the borrowers' commands gather) to `users` calls and any that join. */
  private lend(conn: PlainClient, users: number): Pinned {
    conn.stream.cork();
    return { conn, users, open: true };
  }

  /** Writes what the borrowers issued; the connection goes back now if none still waits for replies. */
  private endLending(lent: Pinned): void {
    lent.open = false;
    lent.conn.stream.uncork();
    if (lent.users === 0) this.release(lent.conn);
  }

  /** Gives `conn` back when `fn` settles; a lent one, when its lending has ended and its last user settled. */
  private async use<T>(
    conn: RedisClient,
    fn: (conn: RedisClient) => Promise<T>,
    pinned?: Pinned,
  ): Promise<T> {
    try {
      if (conn.status !== "ready") {
        throw new CacheError(
          `redis ${this.address}: not connected${this.lastError ? ` (${this.lastError})` : ` (${conn.status})`}`,
        );
      }
      return await this.oneWrite(conn, fn);
    } catch (err) {
      if (err instanceof CacheError) throw err;
      throw new CacheError(`redis ${this.address}: ${(err as Error).message}`);
    } finally {
      if (!pinned) this.release(conn);
      else if (--pinned.users === 0 && !pinned.open) this.release(conn);
    }
  }

  /** Runs `fn` so that the commands it issues synchronously leave in one write (see the top). */
  private oneWrite<T>(conn: RedisClient, fn: (conn: RedisClient) => Promise<T>): Promise<T> {
    if (conn instanceof Cluster) return fn(conn);
    const stream = conn.stream;
    if (this.shared) {
      // Uncorked by the turn's setImmediate (acquire scheduled it before handing out conn).
      if (!stream.writableCorked) {
        stream.cork();
        this.corkedStreams.push(stream);
      }
      return fn(conn);
    }
    stream.cork();
    try {
      return fn(conn);
    } finally {
      stream.uncork();
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.probe) clearInterval(this.probe.timer);
    for (const w of this.waiters.splice(0)) {
      if (w.timer) clearTimeout(w.timer);
      w.reject(new CacheError("redis pool is closed"));
    }
    await Promise.all(
      [...this.all].map(async (c) => {
        try {
          if (c.status === "ready") await c.quit();
          else c.disconnect();
        } catch {
          c.disconnect();
        }
      }),
    );
  }
}
