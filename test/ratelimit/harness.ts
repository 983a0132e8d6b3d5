// tags: @needs-services (the service's counters default to the Redis that scripts/setup.sh starts)
// Test harness for the rate limit service: a runtime directory with rule files,
// the compiled `ratelimit` command started as a child process on free ports (port
// 0, read back from its startup log), and small gRPC / HTTP / stats clients.

import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import { expect } from "chai";
import {
  type RateLimitRequest,
  type RateLimitResponse,
  RateLimitServiceClient,
} from "../../proto/gen/envoy/service/ratelimit/v3/rls.js";
import { loadSettings, SettingsError } from "../../ratelimit/settings/environment.js";

export const REDIS_URL = process.env.TEST_REDIS_URL ?? "127.0.0.1:6379";

export const commandPath = (name: string): string =>
  fileURLToPath(new URL(`../../cmd/${name}.js`, import.meta.url));

export const uniq = (): string => randomBytes(5).toString("hex");

/** A runtime root folder `<tmp>/current/config/*.yaml`, like the reference's layout. */
export class RuntimeDir {
  readonly base = mkdtempSync(path.join(tmpdir(), "rl-test-"));
  readonly root = path.join(this.base, "current");
  readonly configDir = path.join(this.root, "config");

  constructor(files: Record<string, string> = {}) {
    mkdirSync(this.configDir, { recursive: true });
    for (const [name, text] of Object.entries(files)) this.write(name, text);
  }

  write(name: string, text: string): void {
    const file = path.join(this.configDir, name);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, text);
  }

  remove(name: string): void {
    rmSync(path.join(this.configDir, name), { force: true });
  }

  cleanup(): void {
    rmSync(this.base, { recursive: true, force: true });
  }
}

export interface StartOptions {
  runtime: RuntimeDir;
  env?: Record<string, string>;
  /** Wait for the first successful config load (default true). */
  backend?: "redis" | "memory";
}

export class RateLimitProcess {
  readonly child: ChildProcess;
  output = "";
  grpcAddress = "";
  httpUrl = "";
  debugUrl = "";
  readonly prefix = `test_${uniq()}:`;
  private client: RateLimitServiceClient | undefined;

  constructor(opts: StartOptions) {
    const env: Record<string, string> = {
      ...(process.env as Record<string, string>),
      RUNTIME_ROOT: opts.runtime.root,
      RUNTIME_WATCH_ROOT: "false",
      PORT: "0",
      HOST: "127.0.0.1",
      GRPC_PORT: "0",
      GRPC_HOST: "127.0.0.1",
      DEBUG_PORT: "0",
      DEBUG_HOST: "127.0.0.1",
      LOG_FORMAT: "json",
      LOG_LEVEL: "info",
      CACHE_KEY_PREFIX: this.prefix,
      EXPIRATION_JITTER_MAX_SECONDS: "0",
      // One serving process, whose debug port, logs and profiles the suites read; the
      // default (one per usable core) is tested by processes.test.ts and the release test.
      RATELIMIT_PROCESSES: "1",
      ...(opts.backend === "memory" ? { BACKEND_TYPE: "memory" } : { KVSTORE_URL: REDIS_URL }),
      ...opts.env,
    };
    this.child = spawn(process.execPath, [commandPath("ratelimit")], { env });
    this.child.stdout?.on("data", (d) => {
      this.output += d;
    });
    this.child.stderr?.on("data", (d) => {
      this.output += d;
    });
  }

  static async start(opts: StartOptions): Promise<RateLimitProcess> {
    const p = new RateLimitProcess(opts);
    await p.ready();
    return p;
  }

  /** Waits for the "rate limit service started" log line and reads the bound addresses from it. */
  async ready(timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      for (const line of this.output.split("\n")) {
        if (!line.includes("rate limit service started")) continue;
        const o = JSON.parse(line) as { grpc: string; http: string; debug: string };
        this.grpcAddress = o.grpc.startsWith("unix:") ? o.grpc : o.grpc.replace("0.0.0.0", "127.0.0.1");
        this.httpUrl = `http://${o.http.replace("0.0.0.0", "127.0.0.1")}`;
        this.debugUrl = `http://${o.debug.replace("0.0.0.0", "127.0.0.1")}`;
        return;
      }
      if (this.child.exitCode !== null)
        throw new Error(`ratelimit exited with ${this.child.exitCode}:\n${this.output}`);
      await pause(25);
    }
    throw new Error(`ratelimit did not start within ${timeoutMs} ms:\n${this.output}`);
  }

  grpcClient(): RateLimitServiceClient {
    this.client ??= new RateLimitServiceClient(this.grpcAddress, grpc.credentials.createInsecure());
    return this.client;
  }

  /** ShouldRateLimit over gRPC; rejects with the grpc ServiceError. */
  call(domain: string, descriptors: DescriptorSpec[], hitsAddend = 0): Promise<RateLimitResponse> {
    return callGrpc(this.grpcClient(), request(domain, descriptors, hitsAddend));
  }

  /** POST /json with `body` (an object is sent as JSON). */
  async json(body: unknown): Promise<{ status: number; body: string; json: () => Record<string, unknown> }> {
    const res = await fetch(`${this.httpUrl}/json`, {
      method: "POST",
      body: typeof body === "string" ? body : JSON.stringify(body),
      headers: { "content-type": "application/json" },
    });
    const text = await res.text();
    return { status: res.status, body: text, json: () => JSON.parse(text) as Record<string, unknown> };
  }

  async stats(): Promise<Map<string, number>> {
    const text = await (await fetch(`${this.debugUrl}/stats`)).text();
    const out = new Map<string, number>();
    for (const line of text.split("\n")) {
      const i = line.lastIndexOf(": ");
      if (i > 0) out.set(line.slice(0, i), Number(line.slice(i + 2)));
    }
    return out;
  }

  async stat(name: string): Promise<number> {
    return (await this.stats()).get(name) ?? 0;
  }

  /** Polls until `fn` returns true (for reloads and reconnects). */
  async until(what: string, fn: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (await fn().catch(() => false)) return;
      await pause(50);
    }
    throw new Error(`timed out waiting for ${what}:\n${this.output.slice(-3000)}`);
  }

  stop(signal: NodeJS.Signals = "SIGTERM"): Promise<number | null> {
    this.client?.close();
    if (this.child.exitCode !== null) return Promise.resolve(this.child.exitCode);
    return new Promise((resolve) => {
      this.child.once("exit", (code) => resolve(code));
      this.child.kill(signal);
    });
  }
}

/** A descriptor as `[["key","value"], ...]`, optionally with its own hits_addend. */
export type DescriptorSpec = [string, string][] | { entries: [string, string][]; hitsAddend?: bigint };

export function request(domain: string, descriptors: DescriptorSpec[], hitsAddend = 0): RateLimitRequest {
  return {
    domain,
    hitsAddend,
    descriptors: descriptors.map((d) => {
      const spec = Array.isArray(d) ? { entries: d } : d;
      return {
        entries: spec.entries.map(([key, value]) => ({ key, value })),
        limit: undefined,
        hitsAddend: Array.isArray(d) ? undefined : d.hitsAddend,
      };
    }),
  };
}

export function callGrpc(client: RateLimitServiceClient, req: RateLimitRequest): Promise<RateLimitResponse> {
  return new Promise((resolve, reject) => {
    client.shouldRateLimit(req, (err, res) => (err ? reject(err) : resolve(res)));
  });
}

export const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Waits, when needed, until at least `marginMs` remain of the current epoch-aligned window of
 * `unitSeconds`. A sequence that counts several calls against a per-minute limit would
 * otherwise see its counter start over when it straddles the minute, as the service should.
 */
export async function clearOfWindowEdge(unitSeconds: number, marginMs = 5_000): Promise<void> {
  const left = unitSeconds * 1000 - (Date.now() % (unitSeconds * 1000));
  if (left < marginMs) await pause(left + 50);
}

/** `metric{labels}` → value, from a Prometheus text exposition. */
export function parseExposition(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const i = line.lastIndexOf(" ");
    out.set(line.slice(0, i), Number(line.slice(i + 1)));
  }
  return out;
}

/** The problems loadSettings reports for `env`, joined by newlines; fails when it accepts the env. */
export function settingsProblems(env: Record<string, string>): string {
  try {
    loadSettings(env);
  } catch (err) {
    expect(err).to.be.instanceOf(SettingsError);
    return (err as SettingsError).problems.join("\n");
  }
  throw new Error(`settings accepted: ${JSON.stringify(env)}`);
}
