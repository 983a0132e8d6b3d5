// h2load (Debian package nghttp2-client) as the load generator: a C client that costs
// far less CPU per request than any Node client, so more of the machine is left to the
// service under test. It posts one gRPC message (one user, so one counter key) to
// ShouldRateLimit at a fixed concurrency (closed loop) or at a fixed rate (`--rps`,
// open loop) and writes each request's duration to a log file, from which the
// percentiles come. h2load only sees HTTP statuses (always 200 for gRPC); calls
// answered with a gRPC error are counted by the caller from the service's statistics.

import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

export const SHOULD_RATE_LIMIT_PATH = "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit";

export interface H2loadPlan {
  /** `host:port` of the gRPC listener. */
  address: string;
  /** The gRPC frame (5-byte prefix + message) posted by every request. */
  bodyFile: string;
  logFile: string;
  seconds: number;
  connections: number;
  /** Closed loop: calls in flight across all connections. */
  concurrency: number;
  /** Open loop: requests per second across all connections. */
  rate?: number;
}

/** h2load's arguments for a timed run. */
export function h2loadArgs(p: H2loadPlan): string[] {
  const connections = Math.max(1, p.connections);
  const args = ["-D", String(p.seconds), "-c", String(connections)];
  if (p.rate === undefined) {
    args.push("-m", String(Math.max(1, Math.ceil(p.concurrency / connections))));
  } else {
    // --rps is per connection. The stream limit is only a ceiling here: a slow answer must
    // not hold back the next scheduled request (that would hide the delay it causes).
    args.push("--rps", String(Math.max(1, Math.round(p.rate / connections))), "-m", "1024");
  }
  args.push(
    "-d",
    p.bodyFile,
    "-H",
    "content-type: application/grpc",
    "-H",
    "te: trailers",
    "--log-file",
    p.logFile,
    `http://${p.address}${SHOULD_RATE_LIMIT_PATH}`,
  );
  return args;
}

export interface H2loadLog {
  /** Durations of the requests answered with HTTP 200, in ms, sorted. */
  latenciesMs: Float64Array;
  /** Requests with another HTTP status (or none: -1 when the stream failed). */
  failed: number;
}

/** Parses h2load's --log-file: start (µs since epoch) TAB HTTP status TAB duration (µs) per line. */
export function parseH2loadLog(text: string): H2loadLog {
  const ok: number[] = [];
  let failed = 0;
  for (const line of text.split("\n")) {
    if (!line) continue;
    const cols = line.split("\t");
    const status = Number(cols[1]);
    const us = Number(cols[2]);
    if (cols.length < 3 || !Number.isFinite(us)) throw new Error(`unexpected h2load log line: ${line}`);
    if (status === 200) ok.push(us / 1000);
    else failed++;
  }
  return { latenciesMs: Float64Array.from(ok).sort(), failed };
}

function run(cmd: string, args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (d) => {
      output += d;
    });
    child.stderr.on("data", (d) => {
      output += d;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, output }));
  });
}

/** Why h2load cannot be used (not installed, or without --log-file/--rps), or undefined when it can. */
export async function h2loadMissing(cmd = "h2load"): Promise<string | undefined> {
  try {
    const { output } = await run(cmd, ["--help"]);
    for (const flag of ["--log-file", "--rps", "--duration"]) {
      if (!output.includes(flag)) return `${cmd} has no ${flag} option (nghttp2 too old)`;
    }
    return undefined;
  } catch (err) {
    return `${cmd} not found (${(err as Error).message}); install the Debian package nghttp2-client`;
  }
}

/**
 * Runs h2load with `frame` as the request body; throws with its output when it fails.
 * A run that made no request at all (seen now and then with --rps: no connection is
 * opened and h2load still exits 0) is repeated once, then reported as an error rather
 * than as 0 requests/s.
 */
export async function runH2load(
  plan: Omit<H2loadPlan, "bodyFile" | "logFile">,
  frame: Uint8Array,
  cmd = "h2load",
): Promise<H2loadLog> {
  const dir = mkdtempSync(path.join(tmpdir(), "rl-h2load-"));
  try {
    const full: H2loadPlan = {
      ...plan,
      bodyFile: path.join(dir, "body.bin"),
      logFile: path.join(dir, "log.tsv"),
    };
    writeFileSync(full.bodyFile, frame);
    let output = "";
    for (let attempt = 0; attempt < 2; attempt++) {
      rmSync(full.logFile, { force: true });
      const res = await run(cmd, h2loadArgs(full));
      output = res.output;
      if (res.code !== 0) throw new Error(`h2load exited with ${res.code}:\n${output}`);
      if (process.env.H2LOAD_DEBUG) process.stderr.write(`${h2loadArgs(full).join(" ")}\n${output}\n`);
      const log = parseH2loadLog(existsSync(full.logFile) ? readFileSync(full.logFile, "utf8") : "");
      if (log.latenciesMs.length + log.failed > 0) return log;
    }
    throw new Error(`h2load made no requests:\n${output}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
