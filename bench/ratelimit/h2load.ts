// h2load (Debian package nghttp2-client) as the load generator: a C client that costs
// far less CPU per request than any Node client, so more of the machine is left to the
// service under test. It posts one gRPC message (one user, so one counter key) to
// ShouldRateLimit at a fixed concurrency (closed loop) or at a fixed, evenly paced rate
// (timing scripts, open loop) and writes each request's duration to a log file, from which the
// percentiles come. h2load only sees HTTP statuses (always 200 for gRPC); calls
// answered with a gRPC error are counted by the caller from the service's statistics.

import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { runCommand } from "../../test/support/process.js";

export const SHOULD_RATE_LIMIT_PATH = "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit";

/** A gRPC message frame: the uncompressed flag, the length, then the message. */
export function grpcFrame(message: Uint8Array): Buffer {
  const out = Buffer.alloc(5 + message.length);
  out.writeUInt32BE(message.length, 1);
  out.set(message, 5);
  return out;
}

export interface H2loadPlan {
  /** `host:port` of the gRPC listener. */
  address: string;
  /** The gRPC frame (5-byte prefix + message) posted by every request. */
  bodyFile: string;
  logFile: string;
  seconds: number;
  connections: number;
  /** Calls in flight across all connections. */
  concurrency: number;
}

/** h2load's arguments for a timed closed-loop run. */
export function h2loadArgs(p: H2loadPlan): string[] {
  const connections = Math.max(1, p.connections);
  return [
    "-D",
    String(p.seconds),
    "-c",
    String(connections),
    "-m",
    String(Math.max(1, Math.ceil(p.concurrency / connections))),
    ...grpcPostArgs(p.bodyFile, p.logFile),
    `http://${p.address}${SHOULD_RATE_LIMIT_PATH}`,
  ];
}

/** Every request posts `bodyFile` as a gRPC call; each one's duration goes to `logFile`. */
function grpcPostArgs(bodyFile: string, logFile: string): string[] {
  return [
    "-d",
    bodyFile,
    "-H",
    "content-type: application/grpc",
    "-H",
    "te: trailers",
    "--log-file",
    logFile,
  ];
}

export interface H2loadLog {
  /** Durations of the requests answered with HTTP 200, in ms, sorted. */
  latenciesMs: Float64Array;
  /** Requests with another HTTP status (or none: -1 when the stream failed). */
  failed: number;
  /** Start times of the first and the last request, µs since the epoch. */
  firstStartUs: number;
  lastStartUs: number;
}

/** Parses h2load's --log-file: start (µs since epoch) TAB HTTP status TAB duration (µs) per line. */
export function parseH2loadLog(text: string): H2loadLog {
  const ok: number[] = [];
  let failed = 0;
  let firstStartUs = Number.POSITIVE_INFINITY;
  let lastStartUs = 0;
  for (const line of text.split("\n")) {
    if (!line) continue;
    const cols = line.split("\t");
    const start = Number(cols[0]);
    const status = Number(cols[1]);
    const us = Number(cols[2]);
    if (cols.length < 3 || !Number.isFinite(us)) throw new Error(`unexpected h2load log line: ${line}`);
    if (status === 200) ok.push(us / 1000);
    else failed++;
    if (start < firstStartUs) firstStartUs = start;
    if (start > lastStartUs) lastStartUs = start;
  }
  return { latenciesMs: Float64Array.from(ok).sort(), failed, firstStartUs, lastStartUs };
}

/** h2load's run with its output (stdout then stderr) as one text, for messages. */
async function run(cmd: string, args: string[]): Promise<{ code: number | null; output: string }> {
  const r = await runCommand({ file: cmd, cwd: process.cwd() }, args);
  return { code: r.code, output: r.stdout + r.stderr };
}

/** Why h2load cannot be used (not installed, or without the options used here), or undefined when it can. */
export async function h2loadMissing(cmd = "h2load"): Promise<string | undefined> {
  try {
    const { output } = await run(cmd, ["--help"]);
    for (const flag of ["--log-file", "--timing-script-file", "--duration"]) {
      if (!output.includes(flag)) return `${cmd} has no ${flag} option (nghttp2 too old)`;
    }
    return undefined;
  } catch (err) {
    return `${cmd} not found (${(err as Error).message}); install the Debian package nghttp2-client`;
  }
}

/**
 * Runs h2load with `frame` as the request body; throws with its output when it fails.
 * A run that made no request at all (seen now and then: no connection is
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

// The paced open loop. h2load's --rps sends each client's due requests on a timer of about
// 10 ms here, so at 5 000/s over 4 clients they leave in bursts of ~48 and the last of a
// burst waits for all the others: that measures the generator. A timing script instead
// sends one request at each of its offsets; one h2load process per connection (-c 1) runs
// its own script, so requests leave evenly spaced, as from many independent callers.

export interface PacedPlan {
  address: string;
  seconds: number;
  /** h2load processes, one connection each. */
  connections: number;
  /** Requests per second across all connections. */
  rate: number;
}

/** A timing script: `count` requests of `uri`, one every `spacingMs`. */
export function timingScript(uri: string, spacingMs: number, count: number): string {
  let text = "";
  for (let i = 0; i < count; i++) text += `${(i * spacingMs).toFixed(3)}\t${uri}\n`;
  return text;
}

/** h2load's arguments for one connection running a timing script (which gives the URI). */
export function pacedArgs(p: { bodyFile: string; logFile: string; scriptFile: string }): string[] {
  return [
    "-c",
    "1",
    "-m",
    "1024",
    "--timing-script-file",
    p.scriptFile,
    ...grpcPostArgs(p.bodyFile, p.logFile),
  ];
}

/** Requests per second a log shows (its requests over the span of their start times). */
export function achievedRate(log: H2loadLog): number {
  const n = log.latenciesMs.length + log.failed;
  const spanS = (log.lastStartUs - log.firstStartUs) / 1e6;
  return spanS > 0 ? (n - 1) / spanS : 0;
}

async function runPacedOnce(
  p: PacedPlan,
  spacingMs: number,
  frame: Uint8Array,
  dir: string,
  cmd: string,
): Promise<H2loadLog> {
  const uri = `http://${p.address}${SHOULD_RATE_LIMIT_PATH}`;
  // As many requests as the target rate makes in the time; the spacing is what gets them there.
  const count = Math.max(1, Math.round((p.seconds * p.rate) / Math.max(1, p.connections)));
  const bodyFile = path.join(dir, "body.bin");
  const scriptFile = path.join(dir, "script.tsv");
  writeFileSync(bodyFile, frame);
  writeFileSync(scriptFile, timingScript(uri, spacingMs, count));
  const logs = Array.from({ length: Math.max(1, p.connections) }, (_, i) => path.join(dir, `log-${i}.tsv`));
  for (const f of logs) rmSync(f, { force: true });
  const results = await Promise.all(
    logs.map(async (logFile, i) => {
      // Staggered starts, so the connections' requests interleave instead of leaving together.
      await new Promise((r) => setTimeout(r, (i * spacingMs) / logs.length));
      return run(cmd, pacedArgs({ bodyFile, logFile, scriptFile }));
    }),
  );
  for (const r of results) if (r.code !== 0) throw new Error(`h2load exited with ${r.code}:\n${r.output}`);
  if (process.env.H2LOAD_DEBUG)
    process.stderr.write(
      `${pacedArgs({ bodyFile, logFile: logs[0]!, scriptFile }).join(" ")}\n${results[0]!.output}\n`,
    );
  const merged = logs.map((f) => (existsSync(f) ? readFileSync(f, "utf8") : "")).join("");
  const log = parseH2loadLog(merged);
  if (log.latenciesMs.length + log.failed === 0)
    throw new Error(`h2load made no requests:\n${results[0]!.output}`);
  return log;
}

/**
 * The spacing that makes a paced run reach `p.rate`: h2load falls behind a script by its
 * own time per request, so up to three 1 s runs measure the rate a spacing gives and
 * scale it, stopping once within 3 % of the target.
 */
export async function calibratePacing(p: PacedPlan, frame: Uint8Array, cmd = "h2load"): Promise<number> {
  const dir = mkdtempSync(path.join(tmpdir(), "rl-h2load-paced-"));
  try {
    let spacingMs = (1000 * Math.max(1, p.connections)) / p.rate;
    for (let i = 0; i < 3; i++) {
      const got = achievedRate(await runPacedOnce({ ...p, seconds: 1 }, spacingMs, frame, dir, cmd));
      if (got <= 0 || Math.abs(got - p.rate) / p.rate < 0.03) break;
      spacingMs = Math.max(0.01, spacingMs * (got / p.rate));
    }
    return spacingMs;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One paced open-loop run with the spacing from `calibratePacing`; `achievedRate(log)` is its real rate. */
export async function runH2loadPaced(
  p: PacedPlan,
  spacingMs: number,
  frame: Uint8Array,
  cmd = "h2load",
): Promise<H2loadLog> {
  const dir = mkdtempSync(path.join(tmpdir(), "rl-h2load-paced-"));
  try {
    return await runPacedOnce(p, spacingMs, frame, dir, cmd);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
