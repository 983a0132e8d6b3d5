// Wires the service together: counter store, local cache, limiter, rules provider,
// health, the gRPC, HTTP and debug listeners and the statistics output; stops them
// all gracefully.

import type { Logger } from "../common/logger.js";
import { FileConfigProvider } from "./config/file-provider.js";
import type { RateLimitConfig } from "./config/rules.js";
import { CoalescingCounterStore } from "./limiter/coalescing-store.js";
import type { CounterStore } from "./limiter/counter-store.js";
import { FixedWindowLimiter } from "./limiter/fixed-window.js";
import { OverLimitCache } from "./limiter/local-cache.js";
import { MemcacheCounterStore } from "./memcached/counters.js";
import type { ResolveSrv } from "./memcached/servers.js";
import { MemoryCounterStore } from "./memory/counters.js";
import { RedisCounterStore } from "./redis/counters.js";
import { startDebugServer } from "./server/debug-server.js";
import { type GrpcListener, startGrpcServer } from "./server/grpc-server.js";
import { Health } from "./server/health.js";
import { type Listener, startHttpServer } from "./server/http-server.js";
import { startStatsOutput } from "./server/stats-outputs.js";
import { RateLimitService } from "./service/service.js";
import type { Settings } from "./settings/environment.js";
import { type StatsBatch, StatsRelay } from "./stats/process-relay.js";
import { StatsStore } from "./stats/store.js";
import { startTracing, type Tracing } from "./tracing/spans.js";
import { XdsConfigProvider } from "./xds/client.js";

export interface RunningService {
  settings: Settings;
  stats: StatsStore;
  service: RateLimitService;
  health: Health;
  store: CounterStore;
  grpc: GrpcListener;
  http: Listener;
  debug: Listener;
  tracing: Tracing | undefined;
  /** The Prometheus scrape listener (USE_PULL_STATS). */
  pullStats: Listener | undefined;
  /** Marks the service unhealthy (as SIGTERM does), then closes every listener and connection. */
  stop(graceMs?: number): Promise<void>;
}

export interface ServiceDeps {
  /** What tests may replace: the DNS SRV lookup of OBJCACHE_SRV. */
  resolveSrv?: ResolveSrv;
  /**
   * Set in one of several serving processes (RATELIMIT_PROCESSES): its statistics go to the
   * primary through `sendStats` instead of to the outputs, and its debug listener is a
   * private one on a loopback port of its own, which the primary's debug listener forwards to.
   */
  member?: { sendStats(batch: StatsBatch): void };
}

/** Where the counters live: Redis, memcached, or this process's memory (BACKEND_TYPE). */
async function openCounterStore(
  settings: Settings,
  logger: Logger,
  deps: ServiceDeps,
): Promise<CounterStore> {
  if (settings.backendType === "redis") return openRedis(settings, logger);
  if (settings.backendType === "memcache") {
    const memcache = new MemcacheCounterStore(settings.objcache, logger, deps.resolveSrv);
    await memcache.start();
    logger.info({ servers: memcache.servers }, "counters in memcached");
    return memcache;
  }
  logger.warn(
    "counters are kept in this process's memory (BACKEND_TYPE=memory): not shared between instances",
  );
  return new MemoryCounterStore();
}

/**
 * With KVSTORE_STARTUP_MAX_ELAPSED_TIME the start waits for the store and fails
 * without it (as the reference does); otherwise the service serves at once and its
 * decisions fail until the store answers.
 */
async function openRedis(settings: Settings, logger: Logger): Promise<RedisCounterStore> {
  const redis = new RedisCounterStore(settings, logger);
  const startup = settings.kvstore.startup;
  const ready = await redis.waitReady(startup.maxElapsedMs || Math.min(settings.kvstore.timeoutMs, 5000));
  if (!ready && startup.maxElapsedMs > 0) {
    const down = [redis.main, redis.perSecond].filter((p) => p && !p.connected());
    const why = down.map((p) => `${p!.address}: ${p!.lastError || "no answer"}`).join("; ");
    await redis.close();
    throw new Error(
      `no connection to redis within KVSTORE_STARTUP_MAX_ELAPSED_TIME (${startup.maxElapsedMs} ms): ${why}`,
    );
  }
  if (ready) logger.info({ address: redis.main.address }, "connected to redis");
  else
    logger.warn(
      { address: redis.main.address, err: redis.main.lastError },
      "redis not reachable yet; decisions fail until it is",
    );
  return redis;
}

export async function startService(
  settings: Settings,
  logger: Logger,
  deps: ServiceDeps = {},
): Promise<RunningService> {
  const stats = new StatsStore(!settings.disableStats);

  const store = await openCounterStore(settings, logger, deps);

  // A shared store (Redis, memcached) gets one command per round trip for a hot key.
  const counters = settings.backendType === "memory" ? store : new CoalescingCounterStore(store);

  const localCache =
    settings.localCacheSizeInBytes > 0 ? new OverLimitCache(settings.localCacheSizeInBytes) : undefined;
  localCache?.registerStats(stats);
  const limiter = new FixedWindowLimiter(
    counters,
    {
      cacheKeyPrefix: settings.cacheKeyPrefix,
      nearLimitRatio: settings.nearLimitRatio,
      expirationJitterMaxSeconds: settings.expirationJitterMaxSeconds,
      stopCacheKeyIncrementWhenOverlimit: settings.stopCacheKeyIncrementWhenOverlimit,
      localCache,
    },
    stats,
  );
  const service = new RateLimitService(settings, limiter, stats);
  const health = new Health({
    checkCacheConnection: settings.kvstore.healthCheckActiveConnection,
    requireConfig: settings.healthyWithAtLeastOneConfigLoaded,
    cacheConnected: () => store.connected(),
  });
  const onConfig = (config: RateLimitConfig) => {
    service.setConfig(config);
    health.setConfigLoaded(config.domains.size);
  };
  const xds = settings.configType === "GRPC_XDS_SOTW";
  const provider = xds
    ? new XdsConfigProvider(settings, stats, logger, onConfig)
    : new FileConfigProvider(settings, stats, logger, onConfig);

  // Listeners start after the first load attempt unless FORCE_START_WITHOUT_INITIAL_CONFIG;
  // with xDS that is the first configuration the server sends that passes validation.
  if (!settings.forceStartWithoutInitialConfig) {
    if (xds) logger.info({ server: settings.xds.serverUrl }, "waiting for the first configuration from xDS");
    await provider.load();
  }
  const tracing = await startTracing(settings.tracing, logger);
  const grpc = await startGrpcServer(settings, service, stats, health, logger, tracing);
  const http = await startHttpServer(settings.host, settings.port, service, health, logger, tracing);
  const debug = deps.member
    ? await startDebugServer("127.0.0.1", 0, service, stats, logger, { exclusive: true })
    : await startDebugServer(settings.debugHost, settings.debugPort, service, stats, logger);
  if (settings.forceStartWithoutInitialConfig) {
    if (xds) void provider.load();
    else await provider.load();
  }
  provider.watch();

  const healthPoll = setInterval(() => health.notify(), 1000);
  healthPoll.unref();

  const statsOutput = deps.member
    ? relayStats(settings, stats, deps.member.sendStats)
    : await startStatsOutput(settings, stats, logger);

  let stopping: Promise<void> | undefined;
  const stop = (graceMs = 10_000) => {
    stopping ??= (async () => {
      health.setTerminating();
      clearInterval(healthPoll);
      await Promise.all([grpc.shutdown(graceMs), http.close(), debug.close(), provider.stop()]);
      // After the listeners, so the statistics of the calls that finished last are sent too.
      await statsOutput.close();
      await Promise.all([store.close(), tracing?.shutdown()]);
      logger.info("rate limit service stopped");
    })();
    return stopping;
  };

  return {
    settings,
    stats,
    service,
    health,
    store,
    grpc,
    http,
    debug,
    tracing,
    pullStats: statsOutput.pull,
    stop,
  };
}

/** A serving process's statistics go to the primary (nothing to send with DISABLE_STATS). */
function relayStats(
  settings: Settings,
  stats: StatsStore,
  send: (batch: StatsBatch) => void,
): { pull?: Listener; close(): Promise<void> } {
  if (settings.disableStats) return { close: async () => {} };
  const relay = new StatsRelay(stats, send);
  return { close: async () => relay.close() };
}
