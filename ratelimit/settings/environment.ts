// Settings of the rate limit service, read from the environment with the specified names and
// defaults (docs/spec-rules.md#rate-limit-settings). Every bad value is reported with the variable's name and
// what was expected; all problems are collected and reported together.

import { existsSync, readFileSync } from "node:fs";
import { parseDuration } from "../../common/duration.js";
import type { OtelExportSettings } from "../../common/otel.js";
import { usableCores } from "../../common/usable-cores.js";
import { defaultMappingYaml, StatsMapper } from "../stats/prometheus-mapper.js";
import { compileMogrifier, type Mogrifier } from "../stats/tags.js";
import { parseHostPort, parseRedisAddress, type RedisAddress } from "./addresses.js";

export type PoolOnEmptyBehavior = "CREATE" | "ERROR" | "WAIT";
export type BackendType = "redis" | "memory" | "memcache";

export interface KvStoreSettings {
  socketType: string;
  url: string;
  type: "single" | "sentinel" | "cluster";
  auth: string;
  sentinelAuth: string;
  tls: boolean;
  tlsClientCert: string;
  tlsClientKey: string;
  tlsCaCert: string;
  tlsSkipHostnameVerification: boolean;
  poolSize: number;
  timeoutMs: number;
  poolOnEmptyBehavior: PoolOnEmptyBehavior;
  poolOnEmptyWaitMs: number;
  pipelineWindowMs: number;
  clusterPipelineParallelism: number;
  healthCheckActiveConnection: boolean;
  /** Reconnect backoff until the first connection (KVSTORE_STARTUP_*, one setting for both stores). */
  startup: StartupBackoff;
  /** KVSTORE_URL parsed for KVSTORE_TYPE (set when the store is used). */
  address?: RedisAddress;
}

/**
 * KVSTORE_STARTUP_* (the reference's REDIS_STARTUP_*): waits between connection attempts
 * before the first connection, doubling from `initialMs` up to `maxMs` with jitter; with
 * `maxElapsedMs` > 0 the service refuses to start when no connection came within it.
 */
export interface StartupBackoff {
  initialMs: number;
  maxMs: number;
  maxElapsedMs: number;
}

/** The object cache (memcached) backend: OBJCACHE_* (legacy MEMCACHE_*). */
export interface ObjCacheSettings {
  hostPorts: string[];
  srv: string;
  srvRefreshMs: number;
  maxIdleConns: number;
  tls: boolean;
  tlsClientCert: string;
  tlsClientKey: string;
  tlsCaCert: string;
  tlsSkipHostnameVerification: boolean;
}

/** TRACING_*: the export settings shared with the webhooks service, and the switch. */
export interface TracingSettings extends OtelExportSettings {
  enabled: boolean;
}

/** The xDS client (CONFIG_TYPE=GRPC_XDS_SOTW). */
export interface XdsSettings {
  nodeId: string;
  nodeMetadata: Record<string, string>;
  serverUrl: string;
  connectRetryIntervalMs: number;
  useTls: boolean;
  /** PEM contents, read at start (empty when unset). */
  clientTlsCert: string;
  clientTlsKey: string;
  serverTlsCaCert: string;
  serverTlsSan: string;
  additionalHeaders: Record<string, string>;
  backoffJitter: boolean;
  backoffInitialIntervalMs: number;
  backoffMaxIntervalMs: number;
  backoffRandomFactor: number;
  maxMsgSizeInBytes: number | undefined;
}

export interface Settings {
  host: string;
  port: number;
  grpcHost: string;
  grpcPort: number;
  grpcUds: string;
  grpcMaxConnectionAgeMs: number | undefined;
  grpcMaxConnectionAgeGraceMs: number | undefined;
  grpcServerUseTls: boolean;
  grpcServerTlsCert: string;
  grpcServerTlsKey: string;
  grpcClientTlsCaCert: string;
  grpcClientTlsSan: string;
  /** GRPC_SERVER: `fast` serves ShouldRateLimit on node:http2 with its own framing (ratelimit/server/fast-path.ts); `grpc-js` leaves every call to grpc-js. */
  grpcServer: "fast" | "grpc-js";
  debugHost: string;
  debugPort: number;
  /** RATELIMIT_PROCESSES: service processes sharing the listeners (node:cluster); 1 = this process serves. Default: one per usable core. */
  processes: number;

  logLevel: string;
  logFormat: "text" | "json";
  tracing: TracingSettings;

  configType: "FILE" | "GRPC_XDS_SOTW";
  forceStartWithoutInitialConfig: boolean;
  runtimeRoot: string;
  runtimeSubdirectory: string;
  runtimeAppDirectory: string;
  runtimeIgnoreDotFiles: boolean;
  runtimeWatchRoot: boolean;
  mergeDomainConfig: boolean;

  shadowMode: boolean;
  quotaMode: boolean;
  cacheKeyPrefix: string;
  stopCacheKeyIncrementWhenOverlimit: boolean;
  localCacheSizeInBytes: number;
  nearLimitRatio: number;
  expirationJitterMaxSeconds: number;
  healthyWithAtLeastOneConfigLoaded: boolean;

  limitResponseHeadersEnabled: boolean;
  limitLimitHeader: string;
  limitRemainingHeader: string;
  limitResetHeader: string;
  /** RESPONSE_DYNAMIC_METADATA: describe the request and the passed rules' metadata in the response. */
  responseDynamicMetadata: boolean;

  backendType: BackendType;
  kvstore: KvStoreSettings;
  kvstorePerSecond: boolean;
  kvstorePerSecondSettings: KvStoreSettings;
  objcache: ObjCacheSettings;

  useStatsd: boolean;
  statsFlushIntervalMs: number;
  disableStats: boolean;
  extraTags: Record<string, string>;
  statsdHost: string;
  statsdPort: number;
  useTaggedPushStats: boolean;
  taggedPushStatsMogrifiers: Mogrifier[];
  usePullStats: boolean;
  pullStatsAddr: { host: string; port: number };
  pullStatsPath: string;
  /** PULL_STATS_MAPPER_YAML's path, empty for the built-in mapping. */
  pullStatsMapperYaml: string;
  pullStatsResponseTimeAsMilliseconds: boolean;
  /** The mapping in use: the file's, or the built-in one. */
  pullStatsMapper: StatsMapper;

  xds: XdsSettings;
  /** Settings that are read but have no effect, with why; logged as warnings at start. */
  notices: string[];
}

type Env = Record<string, string | undefined>;

/** Thrown when one or more variables hold values that cannot be used. */
export class SettingsError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid settings:\n  ${problems.join("\n  ")}`);
    this.name = "SettingsError";
  }
}

class Reader {
  readonly problems: string[] = [];
  readonly notices: string[] = [];
  /** Every variable name consulted, so a test can prove each of the reference's is read. */
  readonly consulted = new Set<string>();
  constructor(private readonly env: Env) {}

  /** The raw value of the first of `names` that is set (later names are legacy aliases). */
  raw(...names: string[]): [string, string] | undefined {
    for (const name of names) this.consulted.add(name);
    for (const name of names) {
      const value = this.env[name];
      if (value !== undefined && value !== "") return [name, value];
    }
    return undefined;
  }

  str(def: string, ...names: string[]): string {
    return this.raw(...names)?.[1] ?? def;
  }

  bool(def: boolean, ...names: string[]): boolean {
    const found = this.raw(...names);
    if (!found) return def;
    const [name, value] = found;
    // Go's strconv.ParseBool, which the reference uses.
    if (["1", "t", "T", "true", "TRUE", "True"].includes(value)) return true;
    if (["0", "f", "F", "false", "FALSE", "False"].includes(value)) return false;
    this.problems.push(`${name}=${JSON.stringify(value)}: expected a boolean (true/false, 1/0, t/f)`);
    return def;
  }

  int(def: number, min: number, max: number, ...names: string[]): number {
    const found = this.raw(...names);
    if (!found) return def;
    const [name, value] = found;
    if (!/^[+-]?\d+$/.test(value.trim())) {
      this.problems.push(`${name}=${JSON.stringify(value)}: expected an integer`);
      return def;
    }
    const n = Number(value);
    if (n < min || n > max) {
      this.problems.push(`${name}=${value}: expected an integer from ${min} to ${max}`);
      return def;
    }
    return n;
  }

  float(def: number, min: number, max: number, ...names: string[]): number {
    const found = this.raw(...names);
    if (!found) return def;
    const [name, value] = found;
    const n = Number(value);
    if (value.trim() === "" || !Number.isFinite(n) || n < min || n > max) {
      this.problems.push(`${name}=${JSON.stringify(value)}: expected a number from ${min} to ${max}`);
      return def;
    }
    return n;
  }

  duration(def: number | undefined, ...names: string[]): number | undefined {
    const found = this.raw(...names);
    if (!found) return def;
    const [name, value] = found;
    try {
      const ms = parseDuration(value);
      if (ms < 0) throw new Error("negative");
      return ms;
    } catch {
      this.problems.push(`${name}=${JSON.stringify(value)}: expected a Go duration such as 500ms, 10s, 1m`);
      return def;
    }
  }

  oneOf<T extends string>(def: T, allowed: readonly T[], upper: boolean, ...names: string[]): T {
    const found = this.raw(...names);
    if (!found) return def;
    const [name, value] = found;
    const v = (upper ? value.toUpperCase() : value.toLowerCase()) as T;
    if (!allowed.includes(v)) {
      this.problems.push(`${name}=${JSON.stringify(value)}: expected one of ${allowed.join(", ")}`);
      return def;
    }
    return v;
  }

  tags(...names: string[]): Record<string, string> {
    const found = this.raw(...names);
    const out: Record<string, string> = {};
    if (!found) return out;
    for (const part of found[1].split(",")) {
      if (part.trim() === "") continue;
      const i = part.indexOf(":");
      if (i <= 0) {
        this.problems.push(`${found[0]}: item ${JSON.stringify(part)} is not of the form <key>:<value>`);
        continue;
      }
      out[part.slice(0, i).trim()] = part.slice(i + 1).trim();
    }
    return out;
  }
}

function kvStore(r: Reader, prefix: "KVSTORE" | "KVSTORE_PERSECOND", legacy: "REDIS" | "REDIS_PERSECOND") {
  const n = (suffix: string) => [`${prefix}_${suffix}`, `${legacy}_${suffix}`];
  const tlsNames = (suffix: string) => [
    ...new Set([`${prefix}_TLS_${suffix}`, `KVSTORE_TLS_${suffix}`, `REDIS_TLS_${suffix}`]),
  ];
  const s: KvStoreSettings = {
    socketType: r.str("tcp", ...n("SOCKET_TYPE")),
    url: r.str("", ...n("URL")),
    type: r.oneOf("single", ["single", "sentinel", "cluster"] as const, false, ...n("TYPE")),
    auth: r.str("", ...n("AUTH")),
    sentinelAuth: r.str("", ...n("SENTINEL_AUTH")),
    tls: r.bool(false, ...n("TLS")),
    // The per-second twin falls back to the main store's setting (the reference has only
    // that one, REDIS_TLS_*, for both stores).
    tlsClientCert: r.str("", ...tlsNames("CLIENT_CERT")),
    tlsClientKey: r.str("", ...tlsNames("CLIENT_KEY")),
    tlsCaCert: r.str("", ...tlsNames("CACERT")),
    tlsSkipHostnameVerification: r.bool(false, ...tlsNames("SKIP_HOSTNAME_VERIFICATION")),
    poolSize: r.int(10, 1, 10_000, ...n("POOL_SIZE")),
    timeoutMs: r.duration(10_000, ...n("TIMEOUT")) ?? 10_000,
    poolOnEmptyBehavior: r.oneOf(
      "CREATE",
      ["CREATE", "ERROR", "WAIT"] as const,
      true,
      ...n("POOL_ON_EMPTY_BEHAVIOR"),
    ),
    poolOnEmptyWaitMs: r.duration(1000, ...n("POOL_ON_EMPTY_WAIT_DURATION")) ?? 1000,
    pipelineWindowMs: r.duration(0, ...n("PIPELINE_WINDOW")) ?? 0,
    clusterPipelineParallelism: r.int(1, 0, 10_000, ...n("CLUSTER_PIPELINE_PARALLELISM")),
    healthCheckActiveConnection: r.bool(false, ...n("HEALTH_CHECK_ACTIVE_CONNECTION")),
    startup: startupBackoff(r),
  };
  const limit = r.raw(...n("PIPELINE_LIMIT"));
  if (limit)
    r.notices.push(
      `${limit[0]}=${limit[1]} has no effect (deprecated, as in the reference): batching is set by ${prefix}_PIPELINE_WINDOW`,
    );
  if (!["tcp", "unix"].includes(s.socketType)) {
    r.problems.push(`${prefix}_SOCKET_TYPE=${JSON.stringify(s.socketType)}: expected tcp or unix`);
  }
  return s;
}

/** KVSTORE_STARTUP_* (REDIS_STARTUP_*): shared by the main and the per-second store, as in the reference. */
function startupBackoff(r: Reader): StartupBackoff {
  const name = (s: string) => [`KVSTORE_STARTUP_${s}`, `REDIS_STARTUP_${s}`];
  const initialMs = r.duration(1000, ...name("INITIAL_INTERVAL")) ?? 1000;
  const maxMs = r.duration(30_000, ...name("MAX_INTERVAL")) ?? 30_000;
  if (initialMs <= 0)
    r.problems.push("KVSTORE_STARTUP_INITIAL_INTERVAL: expected a positive duration such as 1s");
  if (maxMs < initialMs)
    r.problems.push(
      "KVSTORE_STARTUP_MAX_INTERVAL: must not be shorter than KVSTORE_STARTUP_INITIAL_INTERVAL",
    );
  return { initialMs, maxMs, maxElapsedMs: r.duration(0, ...name("MAX_ELAPSED_TIME")) ?? 0 };
}

/** TLS files are required together; mutual TLS and the SAN check only make sense with TLS on. */
function grpcTlsProblems(s: Settings, problems: string[]): void {
  if (s.grpcServerUseTls) {
    if (!s.grpcServerTlsCert) problems.push("GRPC_SERVER_TLS_CERT: required when GRPC_SERVER_USE_TLS=true");
    if (!s.grpcServerTlsKey) problems.push("GRPC_SERVER_TLS_KEY: required when GRPC_SERVER_USE_TLS=true");
  } else if (s.grpcClientTlsCaCert) {
    // Refused rather than ignored: an operator who set it expects clients to be checked.
    problems.push("GRPC_CLIENT_TLS_CACERT: mutual TLS requires GRPC_SERVER_USE_TLS=true");
  }
  if (s.grpcClientTlsSan && !s.grpcClientTlsCaCert) {
    problems.push("GRPC_CLIENT_TLS_SAN: the client name check requires GRPC_CLIENT_TLS_CACERT (mutual TLS)");
  }
}

const LOG_LEVELS = ["trace", "debug", "info", "warn", "warning", "error", "fatal", "panic"] as const;

/** LOG_LEVEL, also with the reference's logrus names: `warning` is warn, `panic` is fatal. */
function logLevel(r: Reader): string {
  const level = r.oneOf("warn", LOG_LEVELS, false, "LOG_LEVEL");
  return level === "warning" ? "warn" : level === "panic" ? "fatal" : level;
}

/**
 * TRACING_* and the standard OTLP exporter variables. The exporters read the OTLP ones
 * (endpoint, headers, timeout, certificates, …) from the environment themselves; the
 * common ones are checked here so that a typo stops the start instead of losing spans.
 */
function tracing(r: Reader, env: Env): TracingSettings {
  const enabled = r.bool(false, "TRACING_ENABLED");
  const otlpProtocol = r.oneOf(
    "http/protobuf",
    ["grpc", "http/protobuf", "http/json"] as const,
    false,
    "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
    "OTEL_EXPORTER_OTLP_PROTOCOL",
  );
  const protocolSet = r.raw("TRACING_EXPORTER_PROTOCOL") !== undefined;
  let exporterProtocol = r.oneOf("http", ["http", "grpc"] as const, false, "TRACING_EXPORTER_PROTOCOL");
  if (!protocolSet && otlpProtocol === "grpc") exporterProtocol = "grpc";
  const t: TracingSettings = {
    enabled,
    exporterProtocol,
    httpEncoding: otlpProtocol === "http/json" ? "json" : "protobuf",
    serviceName: r.str("RateLimit", "TRACING_SERVICE_NAME"),
    serviceNamespace: r.str("", "TRACING_SERVICE_NAMESPACE"),
    serviceInstanceId: r.str("", "TRACING_SERVICE_INSTANCE_ID"),
    samplingRate: r.float(1, 0, 1, "TRACING_SAMPLING_RATE"),
  };
  for (const name of ["OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"]) {
    const value = env[name];
    if (!value) continue;
    let ok = false;
    try {
      ok = ["http:", "https:"].includes(new URL(value).protocol);
    } catch {}
    // The gRPC exporter also takes host:port, made plain text by OTEL_EXPORTER_OTLP_INSECURE=true.
    if (exporterProtocol === "grpc" && /^[^/:]+:\d+$/.test(value)) ok = true;
    if (!ok) {
      r.problems.push(
        `${name}=${JSON.stringify(value)}: expected a URL such as http://collector:${exporterProtocol === "grpc" ? "4317 (or host:port)" : "4318"}`,
      );
    }
  }
  for (const name of ["OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"]) {
    for (const item of (env[name] ?? "").split(",")) {
      if (item.trim() !== "" && item.indexOf("=") <= 0) {
        r.problems.push(`${name}: item ${JSON.stringify(item)} is not of the form <key>=<value>`);
      }
    }
  }
  r.int(10_000, 1, 2 ** 31, "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT");
  // The exporter understands only true and false here (not Go's 1/t).
  for (const name of ["OTEL_EXPORTER_OTLP_INSECURE", "OTEL_EXPORTER_OTLP_TRACES_INSECURE"]) {
    const value = env[name]?.trim();
    if (value && !/^(true|false)$/i.test(value)) {
      r.problems.push(`${name}=${JSON.stringify(value)}: expected true or false`);
    }
  }
  for (const name of ["OTEL_EXPORTER_OTLP_COMPRESSION", "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION"]) {
    const value = env[name]?.trim();
    if (value && value !== "gzip" && value !== "none") {
      r.problems.push(`${name}=${JSON.stringify(value)}: expected gzip or none`);
    }
  }
  return t;
}

function objCache(r: Reader, used: boolean): ObjCacheSettings {
  const n = (suffix: string) => [`OBJCACHE_${suffix}`, `MEMCACHE_${suffix}`];
  const hostPortRaw = r.raw(...n("HOST_PORT"));
  const s: ObjCacheSettings = {
    hostPorts: (hostPortRaw?.[1] ?? "")
      .split(",")
      .map((x) => x.trim())
      .filter(Boolean),
    srv: r.str("", ...n("SRV")).trim(),
    srvRefreshMs: r.duration(0, ...n("SRV_REFRESH")) ?? 0,
    // As the reference's client: 0 (or less) means its default of 2.
    maxIdleConns: r.int(2, -(2 ** 31), 10_000, ...n("MAX_IDLE_CONNS")),
    tls: r.bool(false, ...n("TLS")),
    tlsClientCert: r.str("", ...n("TLS_CLIENT_CERT")),
    tlsClientKey: r.str("", ...n("TLS_CLIENT_KEY")),
    tlsCaCert: r.str("", ...n("TLS_CACERT")),
    tlsSkipHostnameVerification: r.bool(false, ...n("TLS_SKIP_HOSTNAME_VERIFICATION")),
  };
  if (s.maxIdleConns <= 0) s.maxIdleConns = 2;
  if (!used) return s;
  if (hostPortRaw && s.srv) {
    r.problems.push(
      "OBJCACHE_HOST_PORT and OBJCACHE_SRV: set only one of them (a host list or an SRV record)",
    );
  } else if (!hostPortRaw && !s.srv) {
    r.problems.push(
      "OBJCACHE_HOST_PORT or OBJCACHE_SRV: one is required with BACKEND_TYPE=objcache (host:port,host:port or an SRV name)",
    );
  }
  if (hostPortRaw) {
    const bad = s.hostPorts.filter((x) => !parseHostPort(x));
    if (bad.length || !s.hostPorts.length) {
      r.problems.push(
        `${hostPortRaw[0]}=${JSON.stringify(hostPortRaw[1])}: expected comma-separated host:port${bad.length ? ` (${bad.map((b) => JSON.stringify(b)).join(", ")} is not host:port)` : ""}`,
      );
    }
  }
  if (s.tls) {
    for (const [suffix, file] of [
      ["TLS_CLIENT_CERT", s.tlsClientCert],
      ["TLS_CLIENT_KEY", s.tlsClientKey],
      ["TLS_CACERT", s.tlsCaCert],
    ] as const) {
      if (file && !existsSync(file))
        r.problems.push(`OBJCACHE_${suffix}=${JSON.stringify(file)}: no such file`);
    }
    if (Boolean(s.tlsClientCert) !== Boolean(s.tlsClientKey)) {
      r.problems.push("OBJCACHE_TLS_CLIENT_CERT and OBJCACHE_TLS_CLIENT_KEY: give both or neither");
    }
  }
  return s;
}

/**
 * RATELIMIT_PROCESSES (ours; the reference is one Go process using every core): how many
 * Node processes serve. Unset or `auto`: one per usable core (the CPU quota of a container
 * counts), so the service uses the machine as the reference does. Counters kept in process
 * memory cannot be shared, so the memory backend runs one unless more are asked for, which
 * is refused.
 */
function processes(r: Reader, backendType: BackendType): number {
  const found = r.raw("RATELIMIT_PROCESSES");
  if (found === undefined && backendType === "memory") return 1;
  const n =
    found === undefined || found[1].trim().toLowerCase() === "auto"
      ? usableCores()
      : r.int(1, 1, 64, "RATELIMIT_PROCESSES");
  if (found && n > 1 && backendType === "memory")
    r.problems.push(
      `RATELIMIT_PROCESSES=${found[1]}: BACKEND_TYPE=memory keeps the counters in each process, so every process would count its own share of a limit; use redis or objcache, or one process`,
    );
  return n;
}

/** Reads every setting; throws SettingsError listing all bad values. */
export function loadSettings(env: Env = process.env): Settings {
  const r = new Reader(env);
  const settings = readAll(r, env);
  if (r.problems.length) throw new SettingsError(r.problems);
  return settings;
}

/**
 * The counters' backend (BACKEND_TYPE) and its stores: the key-value store and the one of
 * per-second limits, each address parsed for its type, and the object cache.
 */
function backend(r: Reader) {
  const kv = kvStore(r, "KVSTORE", "REDIS");
  const kvPerSecond = kvStore(r, "KVSTORE_PERSECOND", "REDIS_PERSECOND");
  const perSecond = r.bool(false, "KVSTORE_PERSECOND", "REDIS_PERSECOND");

  // The embedded default: without a key-value store address the counters live in memory.
  const backendRaw = r.raw("BACKEND_TYPE");
  let backendType: BackendType = kv.url ? "redis" : "memory";
  if (backendRaw) {
    const v = backendRaw[1].toLowerCase();
    if (v === "redis" || v === "memory") backendType = v;
    // The specified name and the reference's name of the object cache
    // (docs/spec-rules.md#object-cache-backend).
    else if (v === "objcache" || v === "memcache") backendType = "memcache";
    else
      r.problems.push(
        `BACKEND_TYPE=${JSON.stringify(backendRaw[1])}: expected redis, objcache (or memcache) or memory`,
      );
  }
  const objcache = objCache(r, backendType === "memcache");
  if (backendType === "redis" && !kv.url) {
    r.problems.push("KVSTORE_URL: required when BACKEND_TYPE=redis (host:port or a unix socket path)");
  }
  if (backendType === "redis" && perSecond && !kvPerSecond.url) {
    r.problems.push("KVSTORE_PERSECOND_URL: required when KVSTORE_PERSECOND=true");
  }
  // Each store's address is parsed for its own KVSTORE_TYPE / KVSTORE_PERSECOND_TYPE.
  const parse = (s: KvStoreSettings, prefix: string) => {
    try {
      s.address = parseRedisAddress(`${prefix}_URL`, s.type, s.socketType, s.url);
    } catch (err) {
      r.problems.push((err as Error).message);
    }
  };
  if (backendType === "redis" && kv.url) parse(kv, "KVSTORE");
  if (backendType === "redis" && perSecond && kvPerSecond.url) parse(kvPerSecond, "KVSTORE_PERSECOND");
  return { kv, kvPerSecond, perSecond, backendType, objcache };
}

function readAll(r: Reader, env: Env): Settings {
  const { kv, kvPerSecond, perSecond, backendType, objcache } = backend(r);

  const configType = r.oneOf("FILE", ["FILE", "GRPC_XDS_SOTW"] as const, true, "CONFIG_TYPE");

  const statsFlushIntervalMs = r.duration(10_000, "STATS_FLUSH_INTERVAL") ?? 10_000;
  const settings: Settings = {
    host: r.str("0.0.0.0", "HOST"),
    port: r.int(8080, 0, 65535, "PORT"),
    grpcHost: r.str("0.0.0.0", "GRPC_HOST"),
    grpcPort: r.int(8081, 0, 65535, "GRPC_PORT"),
    grpcUds: r.str("", "GRPC_UDS"),
    grpcMaxConnectionAgeMs: r.duration(undefined, "GRPC_MAX_CONNECTION_AGE"),
    grpcMaxConnectionAgeGraceMs: r.duration(undefined, "GRPC_MAX_CONNECTION_AGE_GRACE"),
    grpcServerUseTls: r.bool(false, "GRPC_SERVER_USE_TLS"),
    grpcServerTlsCert: r.str("", "GRPC_SERVER_TLS_CERT"),
    grpcServerTlsKey: r.str("", "GRPC_SERVER_TLS_KEY"),
    grpcClientTlsCaCert: r.str("", "GRPC_CLIENT_TLS_CACERT"),
    grpcClientTlsSan: r.str("", "GRPC_CLIENT_TLS_SAN"),
    grpcServer: r.oneOf("fast", ["fast", "grpc-js"] as const, false, "GRPC_SERVER"),
    debugHost: r.str("0.0.0.0", "DEBUG_HOST"),
    debugPort: r.int(6070, 0, 65535, "DEBUG_PORT"),
    processes: processes(r, backendType),

    logLevel: logLevel(r),
    logFormat: r.oneOf("text", ["text", "json"] as const, false, "LOG_FORMAT"),
    tracing: tracing(r, env),

    configType,
    forceStartWithoutInitialConfig: r.bool(false, "FORCE_START_WITHOUT_INITIAL_CONFIG"),
    runtimeRoot: r.str("/srv/runtime_data/current", "RUNTIME_ROOT"),
    runtimeSubdirectory: r.str("", "RUNTIME_SUBDIRECTORY"),
    runtimeAppDirectory: r.str("config", "RUNTIME_APPDIRECTORY"),
    runtimeIgnoreDotFiles: r.bool(false, "RUNTIME_IGNOREDOTFILES"),
    runtimeWatchRoot: r.bool(true, "RUNTIME_WATCH_ROOT"),
    mergeDomainConfig: r.bool(false, "MERGE_DOMAIN_CONFIG"),

    shadowMode: r.bool(false, "SHADOW_MODE"),
    quotaMode: r.bool(false, "QUOTA_MODE"),
    cacheKeyPrefix: r.str("", "CACHE_KEY_PREFIX"),
    stopCacheKeyIncrementWhenOverlimit: r.bool(false, "STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT"),
    localCacheSizeInBytes: r.int(0, 0, 2 ** 40, "LOCAL_CACHE_SIZE_IN_BYTES", "LocalCacheSizeInBytes"),
    nearLimitRatio: r.float(0.8, 0, 1, "NEAR_LIMIT_RATIO"),
    expirationJitterMaxSeconds: r.int(300, 0, 2 ** 31, "EXPIRATION_JITTER_MAX_SECONDS"),
    healthyWithAtLeastOneConfigLoaded: r.bool(false, "HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED"),

    limitResponseHeadersEnabled: r.bool(false, "LIMIT_RESPONSE_HEADERS_ENABLED"),
    limitLimitHeader: r.str("RateLimit-Limit", "LIMIT_LIMIT_HEADER"),
    limitRemainingHeader: r.str("RateLimit-Remaining", "LIMIT_REMAINING_HEADER"),
    limitResetHeader: r.str("RateLimit-Reset", "LIMIT_RESET_HEADER"),
    responseDynamicMetadata: r.bool(false, "RESPONSE_DYNAMIC_METADATA"),

    backendType,
    kvstore: kv,
    kvstorePerSecond: perSecond,
    kvstorePerSecondSettings: kvPerSecond,
    objcache,

    useStatsd: r.bool(true, "USE_PUSH_STATS", "USE_STATSD"),
    statsFlushIntervalMs,
    disableStats: r.bool(false, "DISABLE_STATS"),
    extraTags: r.tags("EXTRA_TAGS"),
    ...statsOutput(r, statsFlushIntervalMs),
    xds: xdsSettings(r, configType === "GRPC_XDS_SOTW"),
    notices: r.notices,
  };
  grpcTlsProblems(settings, r.problems);
  return settings;
}

/** The names of every variable the settings consult (the reference's names included). */
export function settingNames(env: Env = {}): Set<string> {
  const r = new Reader(env);
  readAll(r, env);
  return r.consulted;
}

/** Parses `host:port` as Go does (`:9090` is every interface). */
export function parseListenAddress(addr: string): { host: string; port: number } | undefined {
  const m = /^(?:\[([^\]]*)\]|([^:]*)):(\d{1,5})$/.exec(addr);
  if (!m) return undefined;
  const port = Number(m[3]);
  if (port > 65535) return undefined;
  return { host: m[1] ?? m[2] ?? "", port };
}

/** Statsd push (with the tagged format's mogrifiers) and Prometheus pull. */
function statsOutput(r: Reader, flushMs: number) {
  if (flushMs <= 0) r.problems.push("STATS_FLUSH_INTERVAL=0: expected a positive duration such as 10s");
  const useTagged = r.bool(false, "USE_TAGGED_PUSH_STATS", "USE_DOG_STATSD");
  const mogrifiers: Mogrifier[] = [];
  // The reference lists the rules in USE_DOG_STATSD_MOGRIFIERS and reads DOG_STATSD_MOGRIFIER_<NAME>_*.
  const names = r.raw("TAGGED_PUSH_STATS_MOGRIFIERS", "USE_DOG_STATSD_MOGRIFIERS");
  const legacy = names?.[0] === "USE_DOG_STATSD_MOGRIFIERS";
  for (const rule of (names?.[1] ?? "").split(",").map((n) => n.trim())) {
    if (!rule) continue;
    const part = (suffix: string) =>
      r.str("", `TAGGED_PUSH_STATS_MOGRIFIER_${rule}_${suffix}`, `DOG_STATSD_MOGRIFIER_${rule}_${suffix}`) ||
      undefined;
    const m = compileMogrifier(rule, part("PATTERN"), part("NAME"), part("TAGS"));
    if (typeof m === "string") r.problems.push(legacy ? m.replace("TAGGED_PUSH_STATS_", "DOG_STATSD_") : m);
    else mogrifiers.push(m);
  }

  // Each under the specified name (docs/spec-rules.md#pull-statistics) or the reference's (PROMETHEUS_*);
  // errors name the one set.
  const setName = (names: string[]) => r.raw(...names)?.[0] ?? names[0];
  const addrName = setName(["PULL_STATS_ADDR", "PROMETHEUS_ADDR"]);
  const addrText = r.str(":9090", "PULL_STATS_ADDR", "PROMETHEUS_ADDR");
  const addr = parseListenAddress(addrText);
  if (!addr)
    r.problems.push(
      `${addrName}=${JSON.stringify(addrText)}: expected [host]:port, e.g. :9090 or 127.0.0.1:9090`,
    );
  const path = r.str("/metrics", "PULL_STATS_PATH", "PROMETHEUS_PATH");
  const pathName = setName(["PULL_STATS_PATH", "PROMETHEUS_PATH"]);
  if (!path.startsWith("/"))
    r.problems.push(`${pathName}=${JSON.stringify(path)}: expected a path starting with /`);
  const asMs = r.bool(
    false,
    "PULL_STATS_RESPONSE_TIME_AS_MILLISECONDS",
    "PROMETHEUS_RESPONSE_TIME_AS_MILLISECONDS",
  );
  const mapperFile = r.str("", "PULL_STATS_MAPPER_YAML", "PROMETHEUS_MAPPER_YAML");
  let mapper = StatsMapper.fromYaml(defaultMappingYaml(asMs), "built-in mapping");
  const usePull = r.bool(false, "USE_PULL_STATS", "USE_PROMETHEUS");
  if (mapperFile) {
    try {
      mapper = StatsMapper.fromYaml(readFileSync(mapperFile, "utf8"), mapperFile);
    } catch (err) {
      r.problems.push(
        `${setName(["PULL_STATS_MAPPER_YAML", "PROMETHEUS_MAPPER_YAML"])}=${mapperFile}: ${(err as Error).message}`,
      );
    }
  }
  return {
    statsdHost: r.str("localhost", "STATSD_HOST"),
    statsdPort: r.int(8125, 1, 65535, "STATSD_PORT"),
    useTaggedPushStats: useTagged,
    taggedPushStatsMogrifiers: mogrifiers,
    usePullStats: usePull,
    pullStatsAddr: addr ?? { host: "", port: 9090 },
    pullStatsPath: path,
    pullStatsMapperYaml: mapperFile,
    pullStatsResponseTimeAsMilliseconds: asMs,
    pullStatsMapper: mapper,
  };
}

/** CONFIG_GRPC_XDS_* and XDS_CLIENT_*; certificate files are read (and checked) only when used. */
function xdsSettings(r: Reader, used: boolean): XdsSettings {
  const positive = (def: number, name: string) => {
    const v = r.duration(def, name) ?? def;
    if (v <= 0) r.problems.push(`${name}=0: expected a positive duration such as 3s`);
    return v;
  };
  const useTls = r.bool(false, "CONFIG_GRPC_XDS_SERVER_USE_TLS");
  const file = (name: string) => {
    const path = r.str("", name);
    if (!path || !used || !useTls) return "";
    try {
      return readFileSync(path, "utf8");
    } catch (err) {
      r.problems.push(
        `${name}=${path}: cannot read the file (${(err as NodeJS.ErrnoException).code ?? err})`,
      );
      return "";
    }
  };
  const s: XdsSettings = {
    nodeId: r.str("default", "CONFIG_GRPC_XDS_NODE_ID"),
    nodeMetadata: {},
    serverUrl: r.str("localhost:18000", "CONFIG_GRPC_XDS_SERVER_URL"),
    connectRetryIntervalMs: positive(3000, "CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL"),
    useTls,
    clientTlsCert: file("CONFIG_GRPC_XDS_CLIENT_TLS_CERT"),
    clientTlsKey: file("CONFIG_GRPC_XDS_CLIENT_TLS_KEY"),
    serverTlsCaCert: file("CONFIG_GRPC_XDS_SERVER_TLS_CACERT"),
    serverTlsSan: r.str("", "CONFIG_GRPC_XDS_SERVER_TLS_SAN"),
    additionalHeaders: {},
    backoffJitter: r.bool(false, "XDS_CLIENT_BACKOFF_JITTER"),
    backoffInitialIntervalMs: positive(10_000, "XDS_CLIENT_BACKOFF_INITIAL_INTERVAL"),
    backoffMaxIntervalMs: positive(60_000, "XDS_CLIENT_BACKOFF_MAX_INTERVAL"),
    backoffRandomFactor: r.float(0.5, 0, 1, "XDS_CLIENT_BACKOFF_RANDOM_FACTOR"),
    maxMsgSizeInBytes: r.raw("XDS_CLIENT_MAX_MSG_SIZE_IN_BYTES")
      ? r.int(0, 1, 2 ** 31 - 1, "XDS_CLIENT_MAX_MSG_SIZE_IN_BYTES")
      : undefined,
  };
  if (s.backoffMaxIntervalMs < s.backoffInitialIntervalMs)
    r.problems.push(
      "XDS_CLIENT_BACKOFF_MAX_INTERVAL: must not be shorter than XDS_CLIENT_BACKOFF_INITIAL_INTERVAL",
    );
  if (used && useTls && !s.clientTlsCert !== !s.clientTlsKey)
    r.problems.push("CONFIG_GRPC_XDS_CLIENT_TLS_CERT, CONFIG_GRPC_XDS_CLIENT_TLS_KEY: set both or neither");
  for (const [k, v] of Object.entries(r.tags("CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS"))) {
    const name = k.toLowerCase();
    // gRPC metadata keys: lower-case token characters; `-bin` keys would need binary values.
    if (!/^[0-9a-z_.-]+$/.test(name) || name.endsWith("-bin") || name.startsWith("grpc-"))
      r.problems.push(
        `CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS: ${JSON.stringify(k)} cannot be a gRPC header name`,
      );
    else s.additionalHeaders[name] = v;
  }
  // The reference's node metadata, `k=v,k2=v2`.
  const meta = r.raw("CONFIG_GRPC_XDS_NODE_METADATA");
  for (const part of (meta?.[1] ?? "").split(",")) {
    if (part.trim() === "") continue;
    const i = part.indexOf("=");
    if (i <= 0)
      r.problems.push(
        `CONFIG_GRPC_XDS_NODE_METADATA: item ${JSON.stringify(part)} is not of the form <key>=<value>`,
      );
    else s.nodeMetadata[part.slice(0, i).trim()] = part.slice(i + 1).trim();
  }
  return s;
}
