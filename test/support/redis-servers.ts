// tags: @needs-services (starts Redis servers of its own)
// Private Redis servers for tests and benchmarks, from Debian's redis-server on free
// ports with their files in a temp dir: one server, a Sentinel group (master +
// replica + three sentinels) and a Redis Cluster of masters. Each `stop()` kills
// its processes and removes its dir; call it in `after`, also when a test failed.

import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { Redis } from "ioredis";
import { freePort } from "./ports.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const execFileAsync = promisify(execFile);

/** Polls `fn` until it returns true; throws naming `what` after `timeoutMs`. */
export async function waitFor(what: string, fn: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await fn().catch(() => false)) return;
    await sleep(50);
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** One command on a fresh connection to 127.0.0.1:port (no retries). */
export async function redisCommand(
  port: number,
  args: string[],
  password?: string,
  tlsCa?: Buffer,
): Promise<unknown> {
  const r = new Redis({
    port,
    host: "127.0.0.1",
    lazyConnect: true,
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
    password,
    ...(tlsCa ? { tls: { ca: tlsCa } } : {}),
  });
  r.on("error", () => {});
  try {
    await r.connect();
    return await r.call(args[0]!, ...args.slice(1));
  } finally {
    r.disconnect();
  }
}

/** One redis-server (or sentinel) process. */
export class RedisServer {
  child: ChildProcess | undefined;
  output = "";

  constructor(
    readonly port: number,
    /** Arguments after the config file (or the whole command line when no config). */
    readonly args: string[],
    readonly configFile?: string,
    readonly password?: string,
    /** CA of a server that listens with TLS only (`--port 0 --tls-port …`). */
    readonly tlsCa?: Buffer,
  ) {}

  async start(): Promise<void> {
    const argv = this.configFile ? [this.configFile, ...this.args] : this.args;
    this.output = "";
    this.child = spawn("redis-server", argv, { stdio: ["ignore", "pipe", "pipe"] });
    this.child.stdout?.on("data", (d) => {
      this.output += d;
    });
    this.child.stderr?.on("data", (d) => {
      this.output += d;
    });
    try {
      await waitFor(
        `redis-server on ${this.port}`,
        async () => (await redisCommand(this.port, ["PING"], this.password, this.tlsCa)) === "PONG",
        10_000,
      );
    } catch (err) {
      throw new Error(`${(err as Error).message}:\n${this.output}`);
    }
  }

  running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  kill(): Promise<void> {
    const child = this.child;
    if (!child || !this.running()) return Promise.resolve();
    return new Promise((resolve) => {
      child.once("exit", () => resolve());
      child.kill("SIGKILL");
    });
  }
}

/** A server without persistence on 127.0.0.1:port, its files (if any) in `dir`. */
export const baseArgs = (port: number, dir: string) => [
  "--port",
  String(port),
  "--bind",
  "127.0.0.1",
  "--save",
  "",
  "--appendonly",
  "no",
  "--dir",
  dir,
];

/** A temp dir plus the servers living in it. */
abstract class Group {
  readonly dir = mkdtempSync(path.join(tmpdir(), "rl-redis-"));
  readonly servers: RedisServer[] = [];

  async stop(): Promise<void> {
    await Promise.all(this.servers.map((s) => s.kill()));
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A single private redis-server. */
export class SingleRedis extends Group {
  server!: RedisServer;

  static async start(extraArgs: string[] = []): Promise<SingleRedis> {
    const g = new SingleRedis();
    try {
      const port = await freePort();
      g.server = new RedisServer(port, [...baseArgs(port, g.dir), ...extraArgs]);
      g.servers.push(g.server);
      await g.server.start();
      return g;
    } catch (err) {
      await g.stop();
      throw err;
    }
  }

  get url(): string {
    return `127.0.0.1:${this.server.port}`;
  }
}

export interface SentinelOptions {
  masterName?: string;
  /** requirepass of the sentinels (KVSTORE_SENTINEL_AUTH). */
  sentinelPassword?: string;
}

/** A master, one replica and three sentinels watching them (quorum 2, down after 1 s). */
export class SentinelGroup extends Group {
  readonly masterName: string;
  readonly sentinelPassword: string | undefined;
  master!: RedisServer;
  replica!: RedisServer;
  sentinels: RedisServer[] = [];

  private constructor(o: SentinelOptions) {
    super();
    this.masterName = o.masterName ?? "rlmaster";
    this.sentinelPassword = o.sentinelPassword;
  }

  static async start(o: SentinelOptions = {}): Promise<SentinelGroup> {
    const g = new SentinelGroup(o);
    try {
      const [mp, rp] = [await freePort(), await freePort()];
      // Full syncs start at once (Redis 7 waits 5 s by default for more replicas to join).
      const sync = ["--repl-diskless-sync-delay", "0"];
      g.master = new RedisServer(mp, [...baseArgs(mp, g.dir), ...sync]);
      g.replica = new RedisServer(rp, [
        ...baseArgs(rp, g.dir),
        ...sync,
        "--replicaof",
        "127.0.0.1",
        String(mp),
      ]);
      g.servers.push(g.master, g.replica);
      await Promise.all([g.master.start(), g.replica.start()]);
      for (let i = 0; i < 3; i++) {
        const port = await freePort();
        const file = path.join(g.dir, `sentinel-${port}.conf`);
        // Sentinels rewrite their config file, so each gets its own.
        writeFileSync(
          file,
          [
            `port ${port}`,
            "bind 127.0.0.1",
            `dir ${g.dir}`,
            `sentinel monitor ${g.masterName} 127.0.0.1 ${mp} 2`,
            `sentinel down-after-milliseconds ${g.masterName} 1000`,
            `sentinel failover-timeout ${g.masterName} 4000`,
            `sentinel parallel-syncs ${g.masterName} 1`,
            ...(g.sentinelPassword ? [`requirepass ${g.sentinelPassword}`] : []),
            "",
          ].join("\n"),
        );
        const s = new RedisServer(port, ["--sentinel"], file, g.sentinelPassword);
        g.sentinels.push(s);
        g.servers.push(s);
      }
      await Promise.all(g.sentinels.map((s) => s.start()));
      await waitFor("the replica to sync", async () =>
        String(await redisCommand(rp, ["INFO", "replication"])).includes("master_link_status:up"),
      );
      // Ready once every sentinel knows the replica (a failover needs one).
      await waitFor("the sentinels to discover the replica", async () => {
        for (const s of g.sentinels) {
          const replicas = (await redisCommand(
            s.port,
            ["SENTINEL", "REPLICAS", g.masterName],
            g.sentinelPassword,
          )) as unknown[];
          if (!replicas.length) return false;
        }
        return true;
      });
      return g;
    } catch (err) {
      await g.stop();
      throw err;
    }
  }

  /** KVSTORE_URL for type sentinel. */
  get url(): string {
    return [this.masterName, ...this.sentinels.map((s) => `127.0.0.1:${s.port}`)].join(",");
  }

  /** The port of the master as the sentinels see it now. */
  async masterPort(): Promise<number> {
    const [, port] = (await redisCommand(
      this.sentinels[0]!.port,
      ["SENTINEL", "GET-MASTER-ADDR-BY-NAME", this.masterName],
      this.sentinelPassword,
    )) as [string, string];
    return Number(port);
  }

  /** Forces a failover; waits until the old replica is the master and the old master its replica. */
  async failover(): Promise<void> {
    const before = await this.masterPort();
    await redisCommand(
      this.sentinels[0]!.port,
      ["SENTINEL", "FAILOVER", this.masterName],
      this.sentinelPassword,
    );
    await waitFor(
      "the failover",
      async () => {
        const now = await this.masterPort();
        if (now === before) return false;
        const role = (await redisCommand(now, ["ROLE"])) as [string];
        // Until the old master is demoted it still accepts writes, which the resync then drops.
        const old = (await redisCommand(before, ["ROLE"])) as [string];
        return role[0] === "master" && old[0] === "slave";
      },
      20_000,
    );
  }
}

/** A Redis Cluster of `masters` nodes (no replicas), all 16384 slots assigned. */
export class RedisClusterGroup extends Group {
  nodes: RedisServer[] = [];

  static async start(masters = 3): Promise<RedisClusterGroup> {
    const g = new RedisClusterGroup();
    try {
      for (let i = 0; i < masters; i++) {
        const [port, bus] = [await freePort(), await freePort()];
        const node = new RedisServer(port, [
          ...baseArgs(port, g.dir),
          "--cluster-enabled",
          "yes",
          "--cluster-port",
          String(bus),
          "--cluster-config-file",
          path.join(g.dir, `nodes-${port}.conf`),
          "--cluster-node-timeout",
          "2000",
        ]);
        g.nodes.push(node);
        g.servers.push(node);
      }
      await Promise.all(g.nodes.map((n) => n.start()));
      await execFileAsync(
        "redis-cli",
        ["--cluster", "create", ...g.nodes.map((n) => `127.0.0.1:${n.port}`), "--cluster-yes"],
        { timeout: 30_000 },
      );
      await waitFor(
        "cluster_state:ok on every node",
        async () => {
          for (const n of g.nodes) {
            const info = String(await redisCommand(n.port, ["CLUSTER", "INFO"]));
            if (!info.includes("cluster_state:ok")) return false;
          }
          return true;
        },
        20_000,
      );
      return g;
    } catch (err) {
      await g.stop();
      throw err;
    }
  }

  /** KVSTORE_URL for type cluster. */
  get url(): string {
    return this.nodes.map((n) => `127.0.0.1:${n.port}`).join(",");
  }

  /** The node serving `key` (from CLUSTER KEYSLOT and CLUSTER SHARDS/SLOTS). */
  async nodeOf(key: string): Promise<RedisServer> {
    const first = this.nodes.find((n) => n.running())!;
    const slot = Number(await redisCommand(first.port, ["CLUSTER", "KEYSLOT", key]));
    const ranges = (await redisCommand(first.port, ["CLUSTER", "SLOTS"])) as [
      number,
      number,
      [string, number],
    ][];
    const range = ranges.find(([lo, hi]) => slot >= lo && slot <= hi);
    if (!range) throw new Error(`no node serves slot ${slot}`);
    return this.nodes.find((n) => n.port === Number(range[2][1]))!;
  }
}
