// Load generator for the rate limit service: starts the compiled `ratelimit` command
// (Redis, a per-second Redis, a Redis Cluster, memcached or in-memory counters; the
// private servers these need are started here and stopped at the end, or the
// scenario is skipped with the reason), drives ShouldRateLimit over gRPC at a fixed
// concurrency (closed loop) or a fixed rate (open loop), and prints decisions per
// second, p50/p99 latency, the service's CPU per request, peak RSS (the largest serving
// process's) and the bytes its serving processes allocate per request (alloc-probe.ts)
// as a table; the results (each run and the medians) go to bench/results/ratelimit-<time>.json.
//
//   node dist/bench/ratelimit/load.js [--seconds 10] [--repeats 3] [--concurrency 64]
//     [--connections 4] [--rate 5000] [--paced-connections 2] [--redis 127.0.0.1:6379] [--only name,name]
//     [--generator node|h2load|ghz] [--reference on|off] [--floor on|off]
// --only takes name prefixes; a name ending in `$` is that scenario alone (redis-1desc$).
// The generator is this process (a raw node:http2 client, the default), h2load (h2load.ts)
// or ghz (ghz.ts; `bash scripts/ghz.sh build` first), whose pacer holds an exact rate.
// The service runs its default process count (one per usable core) except in 1proc-*, and
// its own heap flags (ratelimit/processes/heap-flags.ts) except in young16-* and v8heap-*,
// and its default gRPC server (GRPC_SERVER=fast) except in grpcjs-* (GRPC_SERVER=grpc-js).
// BENCH_SERVICE_NODE_ARGS passes node flags to the service (e.g. --cpu-prof); H2LOAD_DEBUG=1
// prints every h2load command line and its report.
// The tracing-* scenarios export every span over OTLP/HTTP to a sink in this process.
// With the Go reference built (scripts/ratelimit-reference.sh build; --reference off skips
// it), each Redis scenario without tracing or pull stats has a ref-* twin run by the
// reference in the same repetition (interleaved), and the table gives ours/reference
// ratios: throughput (vsRef), service CPU per request (cpuVsRef), p99 (p99VsRef) and peak
// RSS per serving process (rssPerProcVsRef).
// Every closed-loop run is also given as a ratio to the grpc-js floor of its request shape
// and process count (vsFloor): grpc-js processes that answer a constant, run in the same
// repetition as floor-<n>desc (one process: for 1proc-* and memory-*) and, where the service's
// default is more than one process, floorN-<n>desc (that many, over node:cluster as the
// service runs them) (grpc-floor-server.ts; --floor off skips them). It shows what is left
// to gain inside this service: the floor is the most grpc-js on node:http2 can do here.
// h2floor-1desc answers the same constant on node:http2 alone with gRPC framed by hand
// (http2-floor-server.ts, one process): the ceiling of the fast path, as vsH2Floor of the
// one-process rows.
// With an open loop, floor-1desc-at-<rate>rps runs that process at the same rate: its p99 and
// RSS are what grpc-js alone costs at that rate (p99VsRef against the reference's open loop).
// Statistics are pushed (the default) every second to a UDP sink in this process;
// stats-off-* turns them off and stats-pull-* serves them to a scrape every second.

import { type ChildProcess, spawn } from "node:child_process";
import dgram from "node:dgram";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import net from "node:net";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { fromRoot } from "../../common/paths.js";
import { usableCores } from "../../common/usable-cores.js";
import { RateLimitRequest } from "../../proto/gen/envoy/service/ratelimit/v3/rls.js";
import { SERVICE_STATS } from "../../ratelimit/stats/store.js";
import { ReferenceProcess, referenceBinary } from "../../test/ratelimit/reference-service.js";
import { startMemcached } from "../../test/support/memcached.js";
import { freePort } from "../../test/support/ports.js";
import { RedisClusterGroup, SingleRedis } from "../../test/support/redis-servers.js";
import { cpuSeconds, maxPeakRssMb, processFamily, rssMb } from "../support/proc.js";
import { allocatedBytes, allocProbe } from "./alloc-count.js";
import { ghzBinary, runGhz } from "./ghz.js";
import { GrpcFloorService } from "./grpc-floor.js";
import { calibratePacing, grpcFrame, h2loadMissing, runH2load, runH2loadPaced } from "./h2load.js";

interface Options {
  seconds: number;
  repeats: number;
  concurrency: number;
  connections: number;
  /** h2load's paced open loop: one connection per h2load process (each costs the shared cores). */
  pacedConnections: number;
  rate: number;
  redis: string;
  only: string[];
  generator: "node" | "h2load" | "ghz";
  reference: "on" | "off";
  floor: "on" | "off";
  /** The built ghz, with --generator ghz. */
  ghz?: string;
}

function parseOptions(argv: string[]): Options {
  const o: Options = {
    seconds: 10,
    repeats: 3,
    concurrency: 64,
    connections: 4,
    pacedConnections: 2,
    rate: 5000,
    redis: process.env.KVSTORE_URL ?? "127.0.0.1:6379",
    only: [],
    generator: "node",
    reference: "on",
    floor: "on",
  };
  if (argv.includes("--help") || argv.includes("-h")) {
    // The usage is this file's opening comment.
    const source = readFileSync(fileURLToPath(import.meta.url), "utf8");
    process.stdout.write(`${/^(\/\/.*\n)+/.exec(source)![0].replace(/^\/\/ ?/gm, "")}`);
    process.exit(0);
  }
  for (let i = 0; i < argv.length; i += 2) {
    const flag = argv[i]!.replace(/^--?/, "");
    const name = flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
    const value = argv[i + 1];
    if (value === undefined) throw new Error(`--${flag} needs a value`);
    if (name === "redis") o.redis = value;
    else if (name === "only") o.only = value.split(",");
    else if (name === "generator") {
      if (value !== "node" && value !== "h2load" && value !== "ghz")
        throw new Error("--generator is node, h2load or ghz");
      o.generator = value;
    } else if (name === "reference" || name === "floor") {
      if (value !== "on" && value !== "off") throw new Error(`--${flag} is on or off`);
      o[name] = value;
    } else if (name in o) (o as unknown as Record<string, number>)[name] = Number(value);
    else throw new Error(`unknown option --${flag}`);
  }
  return o;
}

const CONFIG = `domain: bench
descriptors:
  - {key: k1, rate_limit: {unit: hour, requests_per_unit: 1000000000}}
  - {key: k2, rate_limit: {unit: hour, requests_per_unit: 1000000000}}
  - {key: k3, rate_limit: {unit: minute, requests_per_unit: 1000000000}}
  - {key: k4, rate_limit: {unit: day, requests_per_unit: 1000000000}}
  - {key: k5, rate_limit: {unit: second, requests_per_unit: 1000000000}}
`;

type Backend = "redis" | "memory" | "objcache";
/** Private servers a scenario needs: a second Redis for SECOND windows, a cluster, memcached. */
type Needs = "persecond" | "cluster" | "memcache";

interface Scenario {
  name: string;
  backend: Backend;
  needs?: Needs;
  descriptors: number;
  /** Requests per second for an open-loop run; undefined for closed loop at fixed concurrency. */
  rate?: number;
  /** Extra settings for the service. */
  env?: Record<string, string>;
  /** Extra node arguments for the service (after BENCH_SERVICE_NODE_ARGS; its serving processes get them too). */
  nodeArgs?: string[];
  /** Run by the Go reference (the twin of the scenario named without `ref-`). */
  reference?: boolean;
  /** Run by the grpc-js floor (grpc-floor-server.ts) instead of the service. */
  floor?: boolean;
  /** The floor's process count (1 unless given). */
  floorProcesses?: number;
  /** node-http2: the floor framed by hand on node:http2 (http2-floor-server.ts), one process. */
  floorServer?: "node-http2";
}

/** Runs one serving process: 1proc-*, and the memory backend (its default, counters being per process). */
const runsOneProcess = (s: Scenario) =>
  s.name.startsWith("1proc-") || (s.backend === "memory" && !s.env?.RATELIMIT_PROCESSES);

interface RunResult {
  scenario: string;
  requests: number;
  errors: number;
  seconds: number;
  requestsPerSecond: number;
  decisionsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Service CPU time per request: independent of what else runs on the machine. */
  serviceCpuUsPerRequest: number;
  rssMb: number;
  peakRssMb: number;
  /** The largest of the serving processes' peaks (the primary of RATELIMIT_PROCESSES only supervises). */
  peakRssMbPerProcess: number;
  /** Bytes the serving processes allocated on V8's heap per request (alloc-probe.ts); null for the reference. */
  allocBytesPerCall: number | null;
}

/** What a run needs of the service under test, ours or the reference. */
interface Serving {
  address: string;
  /** Node processes that load alloc-probe.ts (ours, the floor), so their allocation is counted. */
  readonly counted: boolean;
  pullStatsUrl: string;
  ready(): Promise<void>;
  pids(): number[];
  errorCount(): Promise<number>;
  stop(): Promise<unknown>;
}

/**
 * The Go reference on the same Redis and rules, configured its way (REDIS_* names),
 * pushing statsd over TCP to this process's sink. Its call errors are not counted here
 * (its /stats has no counters): the node generator counts them from the replies.
 */
class ReferenceService implements Serving {
  readonly counted = false;
  pullStatsUrl = "";
  private process: ReferenceProcess | undefined;
  constructor(
    private readonly binary: string,
    private readonly root: string,
    private readonly redis: string,
    private readonly env: Record<string, string>,
  ) {}

  get address(): string {
    return this.process!.grpcAddress;
  }

  async ready(): Promise<void> {
    const renamed = Object.fromEntries(
      Object.entries(this.env).map(([k, v]) => [k.replace(/^KVSTORE_/, "REDIS_"), v]),
    );
    this.process = await ReferenceProcess.start(this.binary, {
      root: this.root,
      redisUrl: this.redis,
      env: {
        USE_STATSD: "true",
        STATSD_HOST: process.env.STATSD_HOST ?? "127.0.0.1",
        STATSD_PORT: process.env.STATSD_PORT ?? "8125",
        STATS_FLUSH_INTERVAL: process.env.STATS_FLUSH_INTERVAL ?? "1s",
        ...renamed,
      },
    });
  }

  pids(): number[] {
    return this.process ? [this.process.child.pid!] : [];
  }

  async errorCount(): Promise<number> {
    return 0;
  }

  stop(): Promise<unknown> {
    return this.process?.stop() ?? Promise.resolve();
  }
}

class Service implements Serving {
  readonly counted = true;
  readonly child: ChildProcess;
  output = "";
  address = "";
  /** `host:port` of the debug listener (its /stats counts calls answered with an error). */
  debugAddress = "";
  /** The Prometheus scrape URL with USE_PULL_STATS. */
  pullStatsUrl = "";

  constructor(
    root: string,
    backend: Backend,
    redis: string,
    probe: ReturnType<typeof allocProbe>,
    extraEnv: Record<string, string> = {},
    extraNodeArgs: string[] = [],
  ) {
    const cmd = fileURLToPath(new URL("../../cmd/ratelimit.js", import.meta.url));
    // BENCH_SERVICE_NODE_ARGS, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof", profiles the service.
    // On the command line, so the serving processes of RATELIMIT_PROCESSES get them too.
    const nodeArgs = [
      ...probe.nodeArgs,
      ...(process.env.BENCH_SERVICE_NODE_ARGS ?? "").split(" ").filter(Boolean),
      ...extraNodeArgs,
    ];
    this.child = spawn(process.execPath, [...nodeArgs, cmd], {
      env: {
        ...process.env,
        ...probe.env,
        RUNTIME_ROOT: root,
        RUNTIME_WATCH_ROOT: "false",
        HOST: "127.0.0.1",
        PORT: "0",
        GRPC_HOST: "127.0.0.1",
        GRPC_PORT: "0",
        DEBUG_HOST: "127.0.0.1",
        DEBUG_PORT: "0",
        LOG_FORMAT: "json",
        LOG_LEVEL: "warn",
        CACHE_KEY_PREFIX: `bench_${process.pid}_${Date.now()}:`,
        ...(backend === "redis" ? { BACKEND_TYPE: "redis", KVSTORE_URL: redis } : { BACKEND_TYPE: backend }),
        ...extraEnv,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.child.stdout?.on("data", (d) => {
      this.output += d;
    });
    this.child.stderr?.on("data", (d) => {
      this.output += d;
    });
  }

  async ready(): Promise<void> {
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      const line = this.output.split("\n").find((l) => l.includes("rate limit service started"));
      if (line) {
        const started = JSON.parse(line) as { grpc: string; debug: string; pullStats?: string };
        this.address = started.grpc;
        this.debugAddress = started.debug;
        if (started.pullStats) this.pullStatsUrl = `http://${started.pullStats}`;
        return;
      }
      if (this.child.exitCode !== null) throw new Error(`service exited:\n${this.output}`);
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`service did not start:\n${this.output}`);
  }

  /** The service's processes: with RATELIMIT_PROCESSES, the primary and its serving processes. */
  pids(): number[] {
    return processFamily(this.child.pid!);
  }

  /** Calls the service answered with a gRPC error so far (Redis and service errors). */
  async errorCount(): Promise<number> {
    const text = await (await fetch(`http://${this.debugAddress}/stats`)).text();
    let n = 0;
    for (const name of [SERVICE_STATS.redisError, SERVICE_STATS.serviceError]) {
      n += Number(new RegExp(`^${name.replace(/\./g, "\\.")}: (\\d+)$`, "m").exec(text)?.[1] ?? 0);
    }
    return n;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => {
      if (this.child.exitCode !== null) return resolve();
      this.child.once("exit", () => resolve());
      this.child.kill("SIGTERM");
    });
  }
}

function makeRequest(n: number, descriptors: number): RateLimitRequest {
  const user = `u${n % 10_000}`;
  return {
    domain: "bench",
    hitsAddend: 0,
    descriptors: Array.from({ length: descriptors }, (_, i) => ({
      entries: [{ key: `k${i + 1}`, value: user }],
      limit: undefined,
      hitsAddend: undefined,
    })),
  };
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/**
 * A minimal gRPC client on node:http2: requests are encoded once per distinct user and
 * written as one DATA frame; the reply's grpc-status trailer decides success. It costs
 * far less CPU than a full grpc-js client, so the generator leaves more of the
 * machine's two cores to the service under test.
 */
class RawGrpcClient {
  private readonly session: http2.ClientHttp2Session;
  private readonly path = "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit";

  constructor(address: string) {
    this.session = http2.connect(`http://${address}`);
    this.session.on("error", () => {});
  }

  static frame(req: RateLimitRequest): Buffer {
    return grpcFrame(RateLimitRequest.encode(req).finish());
  }

  call(frame: Buffer): Promise<boolean> {
    return new Promise((resolve) => {
      const stream = this.session.request({
        ":method": "POST",
        ":path": this.path,
        "content-type": "application/grpc",
        te: "trailers",
      });
      let status: string | undefined;
      stream.on("response", (headers) => {
        if (headers["grpc-status"] !== undefined) status = String(headers["grpc-status"]);
      });
      stream.on("trailers", (trailers) => {
        status = String(trailers["grpc-status"]);
      });
      stream.on("data", () => {});
      stream.on("close", () => resolve(status === "0"));
      stream.on("error", () => resolve(false));
      stream.end(frame);
    });
  }

  close(): void {
    this.session.close();
  }
}

type DriveResult = Omit<RunResult, "rssMb" | "peakRssMb" | "peakRssMbPerProcess">;

/** The processes that answer calls: a primary's children, or the one process. */
const servingPids = (family: number[]) => (family.length > 1 ? family.slice(1) : family);

/** The service's CPU seconds and allocated bytes so far (NaN: not counted, the reference). */
async function usage(svc: Serving, pids: number[], dir: string): Promise<{ cpu: number; alloc: number }> {
  const cpu = cpuSeconds(pids);
  return { cpu, alloc: svc.counted ? await allocatedBytes(dir, servingPids(pids)) : Number.NaN };
}

function summarize(
  s: Scenario,
  sorted: Float64Array,
  errors: number,
  seconds: number,
  cpu: number,
  alloc: number,
): DriveResult {
  const ok = sorted.length;
  return {
    scenario: s.name,
    requests: ok,
    errors,
    seconds: Number(seconds.toFixed(2)),
    requestsPerSecond: Math.round(ok / seconds),
    decisionsPerSecond: Math.round((ok * s.descriptors) / seconds),
    p50Ms: Number(percentile(sorted, 50).toFixed(3)),
    p99Ms: Number(percentile(sorted, 99).toFixed(3)),
    serviceCpuUsPerRequest: Math.round((cpu * 1e6) / Math.max(1, ok + errors)),
    allocBytesPerCall: Number.isFinite(alloc) ? Math.round(alloc / Math.max(1, ok + errors)) : null,
  };
}

/** An operator's Prometheus scrapes (stats-pull-*); every second, so their cost is in the run. */
function startScraper(svc: Serving): NodeJS.Timeout | undefined {
  if (!svc.pullStatsUrl) return undefined;
  return setInterval(
    () =>
      void fetch(svc.pullStatsUrl).then(
        (r) => r.text(),
        () => "",
      ),
    1000,
  );
}

/** h2load drives the service: one warm-up run (not measured), then the measured one. */
async function driveH2load(svc: Serving, s: Scenario, o: Options, dir: string): Promise<DriveResult> {
  const frame = RawGrpcClient.frame(makeRequest(1, s.descriptors));
  const plan = { address: svc.address, connections: o.connections, concurrency: o.concurrency };
  await runH2load({ ...plan, seconds: 2, concurrency: Math.min(o.concurrency, 16) }, frame);
  const paced =
    s.rate === undefined
      ? undefined
      : { address: svc.address, connections: o.pacedConnections, seconds: o.seconds, rate: s.rate };
  const spacingMs = paced ? await calibratePacing(paced, frame) : 0;
  const errorsBefore = await svc.errorCount();
  const scraper = startScraper(svc);
  const pids = svc.pids();
  const before = await usage(svc, pids, dir);
  // Open loop: evenly paced requests (h2load.ts says why not --rps); closed loop: -c/-m.
  const log = paced
    ? await runH2loadPaced(paced, spacingMs, frame)
    : await runH2load({ ...plan, seconds: o.seconds }, frame);
  const after = await usage(svc, pids, dir);
  clearInterval(scraper);
  const serviceErrors = (await svc.errorCount()) - errorsBefore;
  // A call answered with a gRPC error is an HTTP 200 to h2load: take it out of the latencies' count.
  const latencies = log.latenciesMs.subarray(0, Math.max(0, log.latenciesMs.length - serviceErrors));
  const seconds = paced ? (log.lastStartUs - log.firstStartUs) / 1e6 : o.seconds;
  const failed = log.failed + serviceErrors;
  return summarize(s, latencies, failed, seconds, after.cpu - before.cpu, after.alloc - before.alloc);
}

/** ghz drives the service: one warm-up run (not measured), then the measured one. */
async function driveGhz(svc: Serving, s: Scenario, o: Options, dir: string): Promise<DriveResult> {
  const message = RateLimitRequest.encode(makeRequest(1, s.descriptors)).finish();
  const address = svc.address;
  await runGhz(o.ghz!, { address, seconds: 2, connections: o.connections, concurrency: 16 }, message);
  // Open loop: --rps over the paced connections, with enough workers that none waits for a reply.
  const plan =
    s.rate === undefined
      ? { address, seconds: o.seconds, connections: o.connections, concurrency: o.concurrency }
      : { address, seconds: o.seconds, connections: o.pacedConnections, concurrency: 64, rate: s.rate };
  const scraper = startScraper(svc);
  const pids = svc.pids();
  const before = await usage(svc, pids, dir);
  const result = await runGhz(o.ghz!, plan, message);
  const after = await usage(svc, pids, dir);
  clearInterval(scraper);
  const { latenciesMs, failed, seconds } = result;
  return summarize(s, latenciesMs, failed, seconds, after.cpu - before.cpu, after.alloc - before.alloc);
}

/** Drives `svc` for one run of `s`; `dir` is where alloc-probe.ts writes (alloc-count.ts). */
async function drive(svc: Serving, s: Scenario, o: Options, dir: string): Promise<DriveResult> {
  if (o.generator === "h2load") return driveH2load(svc, s, o, dir);
  if (o.generator === "ghz") return driveGhz(svc, s, o, dir);
  const address = svc.address;
  const clients = Array.from({ length: o.connections }, () => new RawGrpcClient(address));
  // Values cycle over 10 000 users, so counters are real keys without growing forever.
  const frames = Array.from({ length: 10_000 }, (_, i) => RawGrpcClient.frame(makeRequest(i, s.descriptors)));
  const latencies: number[] = [];
  let errors = 0;
  let n = 0;
  const call = async (c: RawGrpcClient) => {
    const t0 = performance.now();
    const ok = await c.call(frames[n++ % frames.length]!);
    if (ok) latencies.push(performance.now() - t0);
    else errors++;
  };

  // Warm-up (connections, JIT), not measured.
  const warmEnd = performance.now() + 1000;
  await Promise.all(
    Array.from({ length: Math.min(o.concurrency, 16) }, async (_, i) => {
      while (performance.now() < warmEnd) await call(clients[i % clients.length]!);
    }),
  );
  latencies.length = 0;
  errors = 0;

  const scraper = startScraper(svc);
  const pids = svc.pids();
  const before = await usage(svc, pids, dir);
  const started = performance.now();
  const end = started + o.seconds * 1000;
  let sent = 0;
  if (s.rate === undefined) {
    await Promise.all(
      Array.from({ length: o.concurrency }, async (_, i) => {
        const c = clients[i % clients.length]!;
        while (performance.now() < end) {
          await call(c);
          sent++;
        }
      }),
    );
  } else {
    // Open loop: every millisecond tick sends what the schedule says is due.
    const rate = s.rate;
    const inflight = new Set<Promise<void>>();
    await new Promise<void>((resolve) => {
      const tick = () => {
        const now = performance.now();
        if (now >= end) return resolve();
        const due = Math.floor(((now - started) / 1000) * rate);
        while (sent < due) {
          const p = call(clients[sent % clients.length]!);
          inflight.add(p);
          p.then(() => inflight.delete(p));
          sent++;
        }
        setTimeout(tick, 1);
      };
      tick();
    });
    await Promise.all(inflight);
  }
  const seconds = (performance.now() - started) / 1000;
  const after = await usage(svc, pids, dir);
  clearInterval(scraper);
  for (const c of clients) c.close();
  const sorted = Float64Array.from(latencies).sort();
  return summarize(s, sorted, errors, seconds, after.cpu - before.cpu, after.alloc - before.alloc);
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
  return Number(m.toFixed(3));
};

/** An OTLP/HTTP endpoint that accepts and drops span batches (so the service's export cost is real). */
async function startSpanSink(): Promise<{ url: string; batches: () => number; close: () => void }> {
  let batches = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      batches++;
      res.writeHead(200, { "content-type": "application/x-protobuf" }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    batches: () => batches,
    close: () => {
      server.close();
      server.closeAllConnections();
    },
  };
}

/**
 * A statsd daemon stand-in: counts the datagrams pushed over UDP (ours) and accepts the
 * reference's TCP stream on the same port number.
 */
async function startStatsdSink(): Promise<{ port: number; datagrams: () => number; close: () => void }> {
  let datagrams = 0;
  const tcpConnections = new Set<net.Socket>();
  const tcp = net.createServer((socket) => {
    tcpConnections.add(socket);
    socket.on("close", () => tcpConnections.delete(socket));
    socket.resume();
  });
  const port = await freePort();
  await new Promise<void>((resolve) => tcp.listen(port, "127.0.0.1", resolve));
  const socket = dgram.createSocket("udp4");
  socket.on("message", () => datagrams++);
  await new Promise<void>((resolve) => socket.bind(port, "127.0.0.1", resolve));
  return {
    port,
    datagrams: () => datagrams,
    close: () => {
      socket.close();
      tcp.close();
      for (const c of tcpConnections) c.destroy();
    },
  };
}

async function main(): Promise<void> {
  const o = parseOptions(process.argv.slice(2));
  if (o.generator === "h2load") {
    const missing = await h2loadMissing();
    if (missing) {
      console.log(`skipping the benchmark with --generator h2load: ${missing}`);
      return;
    }
  }
  if (o.generator === "ghz") {
    o.ghz = await ghzBinary();
    if (!o.ghz) {
      console.log("skipping the benchmark with --generator ghz: build it with `bash scripts/ghz.sh build`");
      return;
    }
  }
  const batched = { KVSTORE_PIPELINE_WINDOW: "150us" };
  const oneProcess = { RATELIMIT_PROCESSES: "1" };
  const young16 = { NODE_OPTIONS: "--max-semi-space-size=16" };
  const grpcJs = { GRPC_SERVER: "grpc-js" };
  // Node's young generation here and V8's own old-generation growth (0: V8 chooses).
  const v8Heap = ["--max-semi-space-size=16", "--heap-growing-percent=0"];
  const statsd = await startStatsdSink();
  process.env.STATSD_HOST = "127.0.0.1";
  process.env.STATSD_PORT = String(statsd.port);
  process.env.STATS_FLUSH_INTERVAL = "1s";
  const sink = await startSpanSink();
  // A queue large enough that no span is dropped at these rates (the default 2048 would drop most).
  const tracing = {
    TRACING_ENABLED: "true",
    OTEL_EXPORTER_OTLP_ENDPOINT: sink.url,
    OTEL_BSP_MAX_QUEUE_SIZE: "100000",
  };
  const all: Scenario[] = [
    { name: "floor-1desc", backend: "memory", descriptors: 1, floor: true },
    { name: "floor-5desc", backend: "memory", descriptors: 5, floor: true },
    // The same constant answer on node:http2 alone: the ceiling of the fast path (GRPC_SERVER=fast).
    { name: "h2floor-1desc", backend: "memory", descriptors: 1, floor: true, floorServer: "node-http2" },
    // The floor with the service's default process count (one per usable core), when that is more than one.
    ...(usableCores() > 1
      ? [1, 5].map((descriptors) => ({
          name: `floorN-${descriptors}desc`,
          backend: "memory" as const,
          descriptors,
          floor: true,
          floorProcesses: usableCores(),
        }))
      : []),
    // The same floor at the open loop's rate: the p99 and memory of grpc-js doing nothing at that rate.
    { name: `floor-1desc-at-${o.rate}rps`, backend: "memory", descriptors: 1, floor: true, rate: o.rate },
    {
      name: `h2floor-1desc-at-${o.rate}rps`,
      backend: "memory",
      descriptors: 1,
      floor: true,
      floorServer: "node-http2",
      rate: o.rate,
    },
    { name: "redis-1desc", backend: "redis", descriptors: 1 },
    { name: "redis-5desc", backend: "redis", descriptors: 5 },
    { name: "redis-1desc-window", backend: "redis", descriptors: 1, env: batched },
    { name: "redis-5desc-window", backend: "redis", descriptors: 5, env: batched },
    { name: "memory-1desc", backend: "memory", descriptors: 1 },
    { name: "stats-off-redis-1desc", backend: "redis", descriptors: 1, env: { DISABLE_STATS: "true" } },
    {
      name: "stats-pull-redis-1desc",
      backend: "redis",
      descriptors: 1,
      env: { USE_PULL_STATS: "true", PULL_STATS_ADDR: "127.0.0.1:0" },
    },
    { name: "tracing-redis-1desc", backend: "redis", descriptors: 1, env: tracing },
    { name: "tracing-memory-1desc", backend: "memory", descriptors: 1, env: tracing },
    // The 5th descriptor has a SECOND limit: with KVSTORE_PERSECOND it goes to the second Redis.
    { name: "redis-5desc-persecond", backend: "redis", descriptors: 5, needs: "persecond" },
    { name: "cluster-1desc", backend: "redis", descriptors: 1, needs: "cluster" },
    { name: "cluster-5desc", backend: "redis", descriptors: 5, needs: "cluster" },
    {
      name: "cluster-5desc-window-par0",
      backend: "redis",
      descriptors: 5,
      needs: "cluster",
      env: { ...batched, KVSTORE_CLUSTER_PIPELINE_PARALLELISM: "0" },
    },
    { name: "memcache-1desc", backend: "objcache", descriptors: 1, needs: "memcache" },
    { name: "memcache-5desc", backend: "objcache", descriptors: 5, needs: "memcache" },
    {
      name: `redis-1desc-window-at-${o.rate}rps`,
      backend: "redis",
      descriptors: 1,
      rate: o.rate,
      env: batched,
    },
    { name: `redis-1desc-at-${o.rate}rps`, backend: "redis", descriptors: 1, rate: o.rate },
    // Node's own young generation (2 x 16 MB) instead of the 2 x 4 MB the service picks for its
    // serving processes (ratelimit/processes/heap-flags.ts): what that choice costs and saves.
    { name: "young16-redis-1desc", backend: "redis", descriptors: 1, env: young16 },
    // Neither of the service's heap flags (Node's and V8's own sizing): what both cost and save.
    { name: "v8heap-redis-1desc", backend: "redis", descriptors: 1, nodeArgs: v8Heap },
    { name: "1proc-v8heap-redis-1desc", backend: "redis", descriptors: 1, env: oneProcess, nodeArgs: v8Heap },
    // A process serving by itself started with the serving processes' young generation, as
    // docs/ratelimit/operations.md#several-processes suggests (it cannot size its own after start).
    {
      name: "1proc-young4-redis-1desc",
      backend: "redis",
      descriptors: 1,
      env: { ...oneProcess, NODE_OPTIONS: "--max-semi-space-size=4" },
    },
    {
      name: `young16-redis-1desc-at-${o.rate}rps`,
      backend: "redis",
      descriptors: 1,
      rate: o.rate,
      env: young16,
    },
    // RATELIMIT_PROCESSES=1: one serving process (the others run the default, one per usable core).
    { name: "1proc-redis-1desc", backend: "redis", descriptors: 1, env: oneProcess },
    // ShouldRateLimit through grpc-js (GRPC_SERVER=grpc-js) instead of the service's own fast path.
    { name: "grpcjs-redis-1desc", backend: "redis", descriptors: 1, env: grpcJs },
    { name: "1proc-grpcjs-redis-1desc", backend: "redis", descriptors: 1, env: { ...oneProcess, ...grpcJs } },
    {
      name: `grpcjs-redis-1desc-at-${o.rate}rps`,
      backend: "redis",
      descriptors: 1,
      rate: o.rate,
      env: grpcJs,
    },
    {
      name: "1proc-redis-1desc-window",
      backend: "redis",
      descriptors: 1,
      env: { ...oneProcess, ...batched },
    },
    {
      name: `1proc-redis-1desc-at-${o.rate}rps`,
      backend: "redis",
      descriptors: 1,
      rate: o.rate,
      env: oneProcess,
    },
  ];
  const chosen = (name: string, x: string) =>
    x.endsWith("$") ? name === x.slice(0, -1) : name.startsWith(x);
  let scenarios = all.filter((s) => o.only.length === 0 || o.only.some((x) => chosen(s.name, x)));
  // The grpc-js floor of every request shape that a chosen closed-loop scenario runs, and of
  // the open loop when one runs, first.
  if (o.floor === "on") {
    const closed = scenarios.filter((s) => s.rate === undefined && !s.floor);
    // One process for every shape run; the default count where a row runs more than one.
    const wanted = (floor: Scenario) =>
      closed.some(
        (s) =>
          s.descriptors === floor.descriptors && (floor.floorProcesses === undefined || !runsOneProcess(s)),
      );
    const open = scenarios.some((s) => s.rate !== undefined);
    const floors = all.filter(
      (s) =>
        s.floor && !scenarios.includes(s) && (s.rate === undefined ? wanted(s) : open && s.descriptors === 1),
    );
    scenarios = [...floors, ...scenarios];
  }
  // The reference's twin of each plain Redis scenario, run right after it in every repetition.
  const refBinary = o.reference === "on" ? referenceBinary() : undefined;
  if (o.reference === "on" && !refBinary)
    process.stderr.write("no reference runs: build it with `bash scripts/ratelimit-reference.sh build`\n");
  if (refBinary) {
    const twinOf = (s: Scenario): Scenario | undefined => {
      const env = s.env ?? {};
      const plain = Object.keys(env).every((k) => k === "KVSTORE_PIPELINE_WINDOW");
      if (s.backend !== "redis" || s.needs || s.floor || s.nodeArgs || !plain) return undefined;
      return { ...s, name: `ref-${s.name}`, reference: true };
    };
    scenarios = scenarios.flatMap((s) => {
      const twin = twinOf(s);
      return twin ? [s, twin] : [s];
    });
  }

  // Start the private servers the chosen scenarios need; skip a scenario whose servers cannot start.
  const needed = new Set(scenarios.flatMap((s) => (s.needs ? [s.needs] : [])));
  const stops: (() => Promise<unknown>)[] = [];
  const needEnv = new Map<Needs, Record<string, string>>();
  const startNeed = async (need: Needs): Promise<Record<string, string>> => {
    if (need === "persecond") {
      const r = await SingleRedis.start();
      stops.push(() => r.stop());
      return { KVSTORE_PERSECOND: "true", KVSTORE_PERSECOND_URL: r.url };
    }
    if (need === "cluster") {
      const c = await RedisClusterGroup.start(3);
      stops.push(() => c.stop());
      return { KVSTORE_TYPE: "cluster", KVSTORE_URL: c.url };
    }
    const nodes = await startMemcached(2);
    stops.push(() => Promise.all(nodes.map((n) => n.kill())));
    return { OBJCACHE_HOST_PORT: nodes.map((n) => n.address).join(",") };
  };
  for (const need of needed) {
    try {
      needEnv.set(need, await startNeed(need));
    } catch (err) {
      process.stderr.write(`skipping the ${need} scenarios: ${(err as Error).message.split("\n")[0]}\n`);
    }
  }
  scenarios = scenarios
    .filter((s) => !s.needs || needEnv.has(s.needs))
    .map((s) => (s.needs ? { ...s, env: { ...needEnv.get(s.needs), ...s.env } } : s));

  const loadBefore = loadavg().map((x) => x.toFixed(2));
  const base = mkdtempSync(path.join(tmpdir(), "rl-bench-"));
  mkdirSync(path.join(base, "config"), { recursive: true });
  writeFileSync(path.join(base, "config", "bench.yaml"), CONFIG);
  const results: RunResult[] = [];
  const allocDir = path.join(base, "alloc");
  mkdirSync(allocDir);
  const probe = allocProbe(allocDir);
  try {
    for (let rep = 0; rep < o.repeats; rep++) {
      for (const s of scenarios) {
        const svc: Serving = s.reference
          ? new ReferenceService(refBinary!, base, o.redis, s.env ?? {})
          : s.floor
            ? new GrpcFloorService(s.floorProcesses, probe, s.floorServer)
            : new Service(base, s.backend, o.redis, probe, s.env, s.nodeArgs);
        try {
          await svc.ready();
          const r = await drive(svc, s, o, allocDir);
          const family = svc.pids();
          const [rss, peakRss] = rssMb(family);
          const perProcess = maxPeakRssMb(servingPids(family));
          const row = {
            ...r,
            rssMb: Number(rss.toFixed(1)),
            peakRssMb: Number(peakRss.toFixed(1)),
            peakRssMbPerProcess: Number(perProcess.toFixed(1)),
          };
          results.push(row);
          process.stderr.write(
            `run ${rep + 1}/${o.repeats} ${s.name}: ${row.requestsPerSecond} req/s, p50 ${row.p50Ms} ms, p99 ${row.p99Ms} ms, ${row.serviceCpuUsPerRequest} µs service CPU/request, peak RSS ${row.peakRssMbPerProcess} MB per serving process, ${row.allocBytesPerCall ?? "-"} B allocated/request, ${row.errors} errors\n`,
          );
        } finally {
          await svc.stop();
        }
      }
    }
  } finally {
    rmSync(base, { recursive: true, force: true });
    sink.close();
    await Promise.all(stops.map((stop) => stop()));
  }
  statsd.close();
  console.log(`statsd datagrams received by the sink: ${statsd.datagrams()}`);
  if (scenarios.some((s) => s.env === tracing))
    console.log(`span batches received by the sink: ${sink.batches()}`);

  const summary = scenarios.map((s) => {
    const runs = results.filter((r) => r.scenario === s.name);
    const counted = runs.flatMap((r) => (r.allocBytesPerCall === null ? [] : [r.allocBytesPerCall]));
    return {
      scenario: s.name,
      runs: runs.length,
      requestsPerSecond: median(runs.map((r) => r.requestsPerSecond)),
      decisionsPerSecond: median(runs.map((r) => r.decisionsPerSecond)),
      p50Ms: median(runs.map((r) => r.p50Ms)),
      p99Ms: median(runs.map((r) => r.p99Ms)),
      serviceCpuUsPerRequest: median(runs.map((r) => r.serviceCpuUsPerRequest)),
      peakRssMb: median(runs.map((r) => r.peakRssMb)),
      peakRssMbPerProcess: median(runs.map((r) => r.peakRssMbPerProcess)),
      allocBytesPerCall: counted.length ? Math.round(median(counted)) : null,
      errors: runs.reduce((a, r) => a + r.errors, 0),
    };
  });
  const baseline = summary.find((x) => x.scenario === "redis-1desc");
  const ratio = (a: number, b: number | undefined) => (b ? Number((a / b).toFixed(2)) : undefined);
  const table = summary.map((x) => {
    // The reference twin of this shape (1proc-*, young16-*, v8heap-*, grpcjs-* and floor-* compare with the same shape's).
    const twin = x.scenario
      .replace(/^(1proc-|young\d+-|v8heap-|grpcjs-)+/, "")
      .replace(/^(floorN?|h2floor)-/, "redis-");
    const ref = x.scenario.startsWith("ref-") ? undefined : summary.find((r) => r.scenario === `ref-${twin}`);
    // The grpc-js floor of the same request shape and process count, for closed-loop rows.
    const shape = /-(\d+)desc/.exec(x.scenario)?.[1];
    const row = scenarios.find((s) => s.name === x.scenario);
    const closed = row?.rate === undefined;
    const floorName = row && runsOneProcess(row) ? `floor-${shape}desc` : `floorN-${shape}desc`;
    const floor =
      closed && !x.scenario.startsWith("floor")
        ? (summary.find((r) => r.scenario === floorName) ??
          summary.find((r) => r.scenario === `floor-${shape}desc`))
        : undefined;
    // The node:http2 floor (one process) of one-process closed-loop rows.
    const h2floor =
      closed && row && runsOneProcess(row) && x.scenario !== `h2floor-${shape}desc`
        ? summary.find((r) => r.scenario === `h2floor-${shape}desc`)
        : undefined;
    return {
      ...x,
      vsRedis1: ratio(x.requestsPerSecond, baseline?.requestsPerSecond),
      vsFloor: ratio(x.decisionsPerSecond, floor?.decisionsPerSecond),
      vsH2Floor: ratio(x.decisionsPerSecond, h2floor?.decisionsPerSecond),
      vsRef: ratio(x.decisionsPerSecond, ref?.decisionsPerSecond),
      cpuVsRef: ratio(x.serviceCpuUsPerRequest, ref?.serviceCpuUsPerRequest),
      p99VsRef: ratio(x.p99Ms, ref?.p99Ms),
      rssPerProcVsRef: ratio(x.peakRssMbPerProcess, ref?.peakRssMbPerProcess),
    };
  });
  const load = loadavg().map((x) => x.toFixed(2));
  console.log(
    `machine load average before/after: ${loadBefore.join(" ")} / ${load.join(" ")} (other processes share these cores)`,
  );
  console.log(
    `rate limit service, medians of ${o.repeats} runs of ${o.seconds}s; closed loop at concurrency ${o.concurrency} over ${o.connections} connections; open loop at ${o.rate}/s over ${o.generator === "node" ? o.connections : o.pacedConnections} connections; generator ${o.generator}; ours runs ${usableCores()} serving processes unless a scenario says 1proc`,
  );
  console.table(table);

  const dir = fromRoot("bench", "results");
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `ratelimit-${new Date().toISOString().replace(/[:.]/g, "-")}.json`);
  writeFileSync(
    file,
    `${JSON.stringify({ date: new Date().toISOString(), options: o, cpus: (await import("node:os")).cpus().length, loadAverageBefore: loadBefore, loadAverageAfter: load, summary: table, runs: results }, null, 2)}\n`,
  );
  console.log(`results written to ${path.relative(process.cwd(), file)}`);
}

main().catch((err: Error) => {
  console.error(err.message);
  process.exit(1);
});
