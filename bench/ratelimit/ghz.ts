// ghz (scripts/ghz.sh builds it) as the load generator: a Go gRPC client whose pacer spaces
// calls evenly at a fixed rate (`--rps`), so an open loop at 5 000/s measures both services
// at exactly that rate; h2load's timing scripts had to be calibrated per service and
// reached different rates against ours and the reference. It also runs closed loops
// (`-c` calls in flight, no rate), at a higher cost per call than h2load. It posts one
// request message (one user, so one counter key) and reports every call's duration and
// status, from which the percentiles and the error count come.

import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fromRoot } from "../../common/paths.js";
import { runCommand } from "../../test/support/process.js";

const METHOD = "envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit";

export interface GhzPlan {
  /** `host:port` of the gRPC listener. */
  address: string;
  seconds: number;
  connections: number;
  /** Calls in flight at most (ghz's workers), spread over the connections. */
  concurrency: number;
  /** Calls per second (open loop); absent: closed loop. */
  rate?: number;
}

export interface GhzResult {
  /** Durations of the calls answered OK, in ms, sorted. */
  latenciesMs: Float64Array;
  /** Calls answered with a gRPC error or not answered. */
  failed: number;
  /** From the first call's start to the last one's, in seconds. */
  seconds: number;
}

/** The built ghz's path, or undefined with `scripts/ghz.sh build` not run. */
export function ghzBinary(): Promise<string | undefined> {
  return new Promise((resolve) =>
    execFile("bash", [fromRoot("scripts", "ghz.sh"), "path"], (err, out) =>
      resolve(err ? undefined : out.trim()),
    ),
  );
}

interface GhzReport {
  details?: { timestamp: string; latency: number; status: string }[];
}

/** Runs ghz for `plan` posting `message` (a serialized RateLimitRequest); throws with its output when it fails. */
export async function runGhz(binary: string, plan: GhzPlan, message: Uint8Array): Promise<GhzResult> {
  const dir = mkdtempSync(path.join(tmpdir(), "rl-ghz-"));
  try {
    const body = path.join(dir, "request.bin");
    writeFileSync(body, message);
    const workers = Math.max(plan.connections, plan.concurrency);
    const args = [
      "--insecure",
      "--protoset",
      fromRoot("proto", "gen", "ratelimit-service.binpb"),
      "--call",
      METHOD,
      "--binary-file",
      body,
      "--connections",
      String(plan.connections),
      "-c",
      String(workers),
      "-z",
      `${plan.seconds}s`,
      ...(plan.rate ? ["--rps", String(plan.rate)] : []),
      "-O",
      "json",
      plan.address,
    ];
    const { code, stdout, stderr } = await runCommand({ file: binary, cwd: process.cwd() }, args);
    if (code !== 0 && !stdout.startsWith("{")) throw new Error(`ghz exited with ${code}:\n${stderr}`);
    return parseGhzReport(JSON.parse(stdout) as GhzReport);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * ghz's JSON report: each call's start, duration (ns) and status. Calls cut off by the end
 * of the run (`Canceled`, or `Unavailable` "transport is closing" in its last moments) are
 * the generator stopping, not the service failing: they are left out, not counted as errors.
 */
export function parseGhzReport(report: GhzReport): GhzResult {
  const details = report.details ?? [];
  const ok: number[] = [];
  let failed = 0;
  let first = Number.POSITIVE_INFINITY;
  let last = 0;
  const ends = details.map((d) => Date.parse(d.timestamp) + d.latency / 1e6);
  const stop = Math.max(0, ...ends);
  for (let i = 0; i < details.length; i++) {
    const d = details[i]!;
    const start = Date.parse(d.timestamp);
    if (d.status === "OK") ok.push(d.latency / 1e6);
    else if (d.status === "Canceled" || (d.status === "Unavailable" && stop - ends[i]! < 50)) continue;
    else failed++;
    first = Math.min(first, start);
    last = Math.max(last, start);
  }
  return {
    latenciesMs: Float64Array.from(ok).sort(),
    failed,
    seconds: details.length > 1 ? (last - first) / 1000 : 0,
  };
}
