// A pool of Redis connections (ioredis). Each decision takes one connection, writes
// its commands as one pipeline and gives the connection back. When every connection
// is busy, KVSTORE_POOL_ON_EMPTY_BEHAVIOR decides: WAIT blocks until one is free;
// CREATE waits KVSTORE_POOL_ON_EMPTY_WAIT_DURATION, then opens an extra connection
// (closed again when the pool is full; at most KVSTORE_POOL_SIZE extra connections at
// once); ERROR waits as long, then fails.
// With KVSTORE_PIPELINE_WINDOW > 0 connections are shared instead, and ioredis's
// auto-pipelining batches the commands of concurrent decisions into one write.

import { readFileSync } from "node:fs";
import type { ConnectionOptions } from "node:tls";
import { Redis, type RedisOptions } from "ioredis";
import type { Logger } from "../common/logger.js";
import { CacheError } from "./counter-store.js";
import type { KvStoreSettings } from "./settings.js";

interface Waiter {
  resolve: (conn: Redis) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout | undefined;
}

/** ioredis options for one store, from KVSTORE_URL / _SOCKET_TYPE / _AUTH / _TLS*. */
export function redisOptions(s: KvStoreSettings): RedisOptions {
  const opts: RedisOptions = {
    connectTimeout: s.timeoutMs,
    commandTimeout: s.timeoutMs,
    // Fail fast while disconnected instead of queueing: a decision should not hang.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: (times: number) => Math.min(100 * times, 2000),
    lazyConnect: false,
  };
  const url = s.url.trim();
  if (/^rediss?:\/\//.test(url)) {
    const u = new URL(url);
    opts.host = u.hostname.replace(/^\[|\]$/g, "");
    opts.port = Number(u.port || 6379);
    if (u.username) opts.username = decodeURIComponent(u.username);
    if (u.password) opts.password = decodeURIComponent(u.password);
    const db = u.pathname.replace(/^\//, "");
    if (db) opts.db = Number(db);
    if (u.protocol === "rediss:") opts.tls = {};
  } else if (s.socketType === "unix" || url.startsWith("/")) {
    opts.path = url;
  } else {
    const m = /^\[?([^\]]*?)\]?:(\d+)$/.exec(url);
    if (!m) throw new Error(`KVSTORE_URL=${JSON.stringify(url)}: expected host:port or a unix socket path`);
    opts.host = m[1] || "127.0.0.1";
    opts.port = Number(m[2]);
  }
  if (s.auth) {
    const i = s.auth.indexOf(":");
    if (i >= 0) {
      opts.username = s.auth.slice(0, i);
      opts.password = s.auth.slice(i + 1);
    } else opts.password = s.auth;
  }
  if (s.tls) {
    const tls: ConnectionOptions = {};
    if (s.tlsCaCert) tls.ca = readFileSync(s.tlsCaCert);
    if (s.tlsClientCert) tls.cert = readFileSync(s.tlsClientCert);
    if (s.tlsClientKey) tls.key = readFileSync(s.tlsClientKey);
    if (s.tlsSkipHostnameVerification) tls.checkServerIdentity = () => undefined;
    opts.tls = tls;
  }
  // Commands issued in one event-loop turn leave in one write (the per-request pipeline).
  opts.enableAutoPipelining = true;
  return opts;
}

export class RedisPool {
  private readonly idle: Redis[] = [];
  private readonly all = new Set<Redis>();
  private readonly overflow = new Set<Redis>();
  private readonly waiters: Waiter[] = [];
  private readonly options: RedisOptions;
  readonly shared: boolean;
  private nextShared = 0;
  private rotating = false;
  private closed = false;
  lastError = "";
  readonly address: string;

  constructor(
    private readonly settings: KvStoreSettings,
    private readonly logger: Logger,
    readonly label: string,
  ) {
    this.options = redisOptions(settings);
    this.address = this.options.path ?? `${this.options.host}:${this.options.port}`;
    this.shared = settings.pipelineWindowMs > 0;
    for (let i = 0; i < settings.poolSize; i++) this.idle.push(this.open());
  }

  private open(): Redis {
    const conn = new Redis(this.options);
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
    this.all.add(conn);
    return conn;
  }

  /** True when at least one connection is ready. */
  connected(): boolean {
    for (const c of this.all) if (c.status === "ready") return true;
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

  acquire(): Promise<Redis> | Redis {
    if (this.closed) throw new CacheError("redis pool is closed");
    if (this.shared) {
      // Every decision of one event-loop turn uses the same connection, so their
      // commands leave in one write; the next turn moves on to the next connection.
      if (!this.rotating) {
        this.rotating = true;
        setImmediate(() => {
          this.rotating = false;
          this.nextShared++;
        });
      }
      const conns = this.idle;
      for (let i = 0; i < conns.length; i++) {
        const c = conns[(this.nextShared + i) % conns.length]!;
        if (c.status === "ready") return c;
      }
      return conns[this.nextShared % conns.length]!;
    }
    const conn = this.idle.pop();
    if (conn) return conn;
    const behavior = this.settings.poolOnEmptyBehavior;
    return new Promise<Redis>((resolve, reject) => {
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

  release(conn: Redis): void {
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

  /** Runs `fn` with a connection of the pool; errors become CacheError with the Redis message. */
  async with<T>(fn: (conn: Redis) => Promise<T>): Promise<T> {
    const conn = await this.acquire();
    try {
      if (conn.status !== "ready") {
        throw new CacheError(
          `redis ${this.address}: not connected${this.lastError ? ` (${this.lastError})` : ` (${conn.status})`}`,
        );
      }
      return await fn(conn);
    } catch (err) {
      if (err instanceof CacheError) throw err;
      throw new CacheError(`redis ${this.address}: ${(err as Error).message}`);
    } finally {
      this.release(conn);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
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
