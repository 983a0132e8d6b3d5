// tags: @needs-services (the Go reference service on the Redis that scripts/setup.sh starts)
// The Go reference service (envoyproxy/ratelimit, built by scripts/ratelimit-reference.sh)
// as a child process on free loopback ports, configured the reference's way (REDIS_*,
// USE_STATSD=false so that its statistics are logged as JSON lines, which `counters()`
// sums). Used by the conformance test and by bench/ratelimit for side-by-side runs.

import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import * as grpc from "@grpc/grpc-js";
import { fromRoot } from "../../common/paths.js";
import {
  type RateLimitRequest,
  type RateLimitResponse,
  RateLimitServiceClient,
} from "../../proto/gen/envoy/service/ratelimit/v3/rls.js";
import { freePort } from "../support/ports.js";
import { callGrpc, pause, REDIS_URL, uniq } from "./harness.js";

/** The built reference's path, or undefined when it was not built (or Go is missing). */
export function referenceBinary(): string | undefined {
  try {
    return execFileSync("bash", [fromRoot("scripts", "ratelimit-reference.sh"), "path"], {
      encoding: "utf8",
    }).trim();
  } catch {
    return undefined;
  }
}

export function goAvailable(): boolean {
  try {
    execFileSync("go", ["version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

export interface ReferenceOptions {
  /** The rules: RUNTIME_ROOT is this runtime's root. */
  root: string;
  env?: Record<string, string>;
  redisUrl?: string;
}

export class ReferenceProcess {
  readonly child: ChildProcess;
  output = "";
  readonly prefix = `ref_${uniq()}:`;
  private client: RateLimitServiceClient | undefined;

  private constructor(
    binary: string,
    opts: ReferenceOptions,
    readonly ports: { http: number; grpc: number; debug: number },
  ) {
    this.child = spawn(binary, [], {
      env: {
        PATH: process.env.PATH ?? "",
        RUNTIME_ROOT: opts.root,
        RUNTIME_SUBDIRECTORY: "",
        RUNTIME_WATCH_ROOT: "false",
        HOST: "127.0.0.1",
        PORT: String(ports.http),
        GRPC_HOST: "127.0.0.1",
        GRPC_PORT: String(ports.grpc),
        DEBUG_HOST: "127.0.0.1",
        DEBUG_PORT: String(ports.debug),
        LOG_LEVEL: "warn",
        REDIS_SOCKET_TYPE: "tcp",
        REDIS_TYPE: "single",
        REDIS_URL: opts.redisUrl ?? REDIS_URL,
        CACHE_KEY_PREFIX: this.prefix,
        EXPIRATION_JITTER_MAX_SECONDS: "0",
        USE_STATSD: "false",
        STATS_FLUSH_INTERVAL: "200ms",
        ...opts.env,
      },
    });
    this.child.stdout?.on("data", (d) => {
      this.output += d;
    });
    this.child.stderr?.on("data", (d) => {
      this.output += d;
    });
  }

  static async start(binary: string, opts: ReferenceOptions): Promise<ReferenceProcess> {
    const ports = { http: await freePort(), grpc: await freePort(), debug: await freePort() };
    const p = new ReferenceProcess(binary, opts, ports);
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      if (p.child.exitCode !== null) throw new Error(`the reference exited:\n${p.output}`);
      const ok = await fetch(`${p.httpUrl}/healthcheck`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ok) return p;
      await pause(50);
    }
    await p.stop();
    throw new Error(`the reference did not become healthy:\n${p.output}`);
  }

  get grpcAddress(): string {
    return `127.0.0.1:${this.ports.grpc}`;
  }

  get httpUrl(): string {
    return `http://127.0.0.1:${this.ports.http}`;
  }

  call(req: RateLimitRequest): Promise<RateLimitResponse> {
    this.client ??= new RateLimitServiceClient(this.grpcAddress, grpc.credentials.createInsecure());
    return callGrpc(this.client, req);
  }

  /** Counter totals from the statistics the reference has logged so far (deltas per flush). */
  counters(): Map<string, number> {
    const out = new Map<string, number>();
    for (const line of this.output.split("\n")) {
      if (!line.includes('"flushing counter"')) continue;
      try {
        const { json } = JSON.parse(line) as { json: { name: string; value: string } };
        out.set(json.name, (out.get(json.name) ?? 0) + Number(json.value));
      } catch {
        // A line cut by the pipe's chunking; the next flush repeats nothing, so wait for it.
      }
    }
    return out;
  }

  stop(): Promise<number | null> {
    this.client?.close();
    if (this.child.exitCode !== null) return Promise.resolve(this.child.exitCode);
    return new Promise((resolve) => {
      this.child.once("exit", (code) => resolve(code));
      this.child.kill("SIGTERM");
    });
  }
}
