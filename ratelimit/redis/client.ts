// One ioredis client for a store, by KVSTORE_TYPE: a plain connection (`single`), a
// connection to the master that a Sentinel group names (`sentinel`, following
// failovers), or a Redis Cluster client that routes each key to its node (`cluster`).
// All fail fast while disconnected (no offline queue) so a decision never hangs.

import { Cluster, type ClusterOptions, Redis, type RedisOptions } from "ioredis";
import type { RedisAddress } from "../settings/addresses.js";
import { clientTlsOptions } from "../settings/client-tls.js";
import type { KvStoreSettings, StartupBackoff } from "../settings/environment.js";

export type RedisClient = Redis | Cluster;

/** `<password>` or `<username>:<password>`, as KVSTORE_AUTH and KVSTORE_SENTINEL_AUTH take them. */
export function splitAuth(auth: string): { username?: string; password?: string } {
  if (!auth) return {};
  const i = auth.indexOf(":");
  return i >= 0 ? { username: auth.slice(0, i), password: auth.slice(i + 1) } : { password: auth };
}

/** Reconnecting after a connection was lost: quickly, since decisions fail meanwhile. */
export const reconnectDelay = (times: number) => Math.min(100 * times, 2000);

/**
 * Before the first connection (KVSTORE_STARTUP_*): the wait doubles from the initial
 * interval up to the maximum, each wait drawn between the initial interval and that value.
 */
export function startupDelay(b: StartupBackoff, attempt: number): number {
  const top = Math.min(b.maxMs, b.initialMs * 2 ** Math.min(attempt - 1, 30));
  return Math.round(b.initialMs + Math.random() * (top - b.initialMs));
}

/** A client whose reconnect waits follow the startup backoff until it first connects. */
function withStartupBackoff<C extends RedisClient>(
  b: StartupBackoff,
  make: (strategy: (times: number) => number) => C,
): C {
  let connected = false;
  const client = make((times) => (connected ? reconnectDelay(times) : startupDelay(b, times)));
  client.once("ready", () => {
    connected = true;
  });
  return client;
}

/** Returns a function that opens a new client (the pool calls it once per connection). */
export function redisClientFactory(s: KvStoreSettings, address: RedisAddress): () => RedisClient {
  const common: RedisOptions = {
    connectTimeout: s.timeoutMs,
    commandTimeout: s.timeoutMs,
    maxRetriesPerRequest: 0,
    // No auto-pipelining on single/sentinel connections: the pool corks the socket instead
    // (pool.ts), which gives the same single write without a Pipeline per batch.
    enableAutoPipelining: false,
    ...splitAuth(s.auth),
  };
  const tls = clientTlsOptions(s);
  if (tls) common.tls = tls;

  if (address.type === "cluster") {
    const opts: ClusterOptions = {
      redisOptions: common,
      enableOfflineQueue: false,
      // A cluster client writes to several nodes: its auto-pipelining groups commands per node.
      enableAutoPipelining: true,
      slotsRefreshTimeout: Math.max(1000, Math.min(s.timeoutMs, 5000)),
      scaleReads: "master",
    };
    return () =>
      withStartupBackoff(
        s.startup,
        (strategy) => new Cluster(address.nodes, { ...opts, clusterRetryStrategy: strategy }),
      );
  }

  const opts: RedisOptions = { ...common, enableOfflineQueue: false };
  const open = () =>
    withStartupBackoff(s.startup, (strategy) => new Redis({ ...opts, retryStrategy: strategy }));
  if (address.type === "sentinel") {
    const sentinelAuth = splitAuth(s.sentinelAuth);
    Object.assign(opts, {
      name: address.masterName,
      sentinels: address.sentinels,
      sentinelUsername: sentinelAuth.username,
      sentinelPassword: sentinelAuth.password,
      sentinelCommandTimeout: s.timeoutMs,
      // Reconnect as soon as a sentinel announces +switch-master, not only when the old
      // master drops the connection; a write refused by a demoted master reconnects too.
      failoverDetector: true,
      reconnectOnError: (err: Error) => (err.message.startsWith("READONLY") ? 2 : false),
      enableTLSForSentinelMode: Boolean(tls),
      sentinelTLS: tls,
    } satisfies RedisOptions);
    return open;
  }

  if (address.path) opts.path = address.path;
  else {
    opts.host = address.host;
    opts.port = address.port;
  }
  if (address.username) opts.username = address.username;
  if (address.password) opts.password = address.password;
  if (address.db !== undefined) opts.db = address.db;
  if (address.tls && !opts.tls) opts.tls = {};
  // KVSTORE_AUTH wins over credentials in a redis:// URL.
  Object.assign(opts, splitAuth(s.auth));
  return open;
}

/** True while the client can serve commands (a cluster client: once it has the slot map). */
export function clientConnected(c: RedisClient): boolean {
  return c.status === "ready";
}

/**
 * True when every master that owns slots answers PING. A cluster client connects to
 * nodes lazily and drops a node whose connection ends, so its own status does not
 * show a dead master; the slot map still names it until the cluster reassigns its slots.
 */
export async function probeCluster(c: Cluster): Promise<boolean> {
  if (c.status !== "ready") return false;
  const owners = new Set<string>();
  for (const slot of c.slots) if (slot?.[0]) owners.add(slot[0]);
  const byKey = new Map<string, Redis>(c.nodes("all").map((n) => [`${n.options.host}:${n.options.port}`, n]));
  // A dropped node comes back only with a new slot map: ask for one.
  if ([...owners].some((key) => !byKey.has(key))) c.refreshSlotsCache();
  const pings = [...owners].map(
    (key) => byKey.get(key)?.ping() ?? Promise.reject(new Error(`no connection to ${key}`)),
  );
  return (await Promise.allSettled(pings)).every((r) => r.status === "fulfilled");
}
