// Profiling on the debug port, under /debug/pprof/ as the reference has it, through
// Node's inspector instead of Go's pprof: a CPU profile over `?seconds=N` (Chrome
// DevTools' .cpuprofile JSON) and a heap snapshot (.heapsnapshot JSON). Open either
// in DevTools (Performance / Memory tab) or in VS Code.

import type http from "node:http";
import { Session } from "node:inspector/promises";

export const PPROF_PREFIX = "/debug/pprof/";
const DEFAULT_SECONDS = 30;
const MAX_SECONDS = 600;

const ENTRIES: Record<string, string> = {
  "profile?seconds=30": "CPU profile over the given seconds (default 30, at most 600), .cpuprofile JSON",
  heap: "heap snapshot (runs a full garbage collection first), .heapsnapshot JSON",
  cmdline: "the command line of this process",
};

let cpuProfileRunning = false;

function text(res: http.ServerResponse, status: number, body: string): void {
  res.writeHead(status, { "Content-Type": "text/plain; charset=utf-8" });
  res.end(body);
}

function index(): string {
  return Object.entries(ENTRIES)
    .map(([p, d]) => `${PPROF_PREFIX}${p}: ${d}\n`)
    .join("");
}

async function cpuProfile(query: URLSearchParams, res: http.ServerResponse): Promise<void> {
  const raw = query.get("seconds");
  const seconds = raw === null || raw === "" ? DEFAULT_SECONDS : Number(raw);
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > MAX_SECONDS) {
    return text(res, 400, `seconds=${raw}: expected a whole number of seconds from 1 to ${MAX_SECONDS}\n`);
  }
  // Profiles of one process overlap: a second one at the same time would measure both requests' work twice.
  if (cpuProfileRunning)
    return text(res, 409, "a CPU profile is already being taken; try again when it ends\n");
  cpuProfileRunning = true;
  const session = new Session();
  session.connect();
  try {
    await session.post("Profiler.enable");
    await session.post("Profiler.start");
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, seconds * 1000);
      // A client that gave up does not keep the profiler running for nothing.
      res.once("close", () => {
        clearTimeout(timer);
        resolve();
      });
    });
    const { profile } = await session.post("Profiler.stop");
    if (res.destroyed) return;
    res.writeHead(200, {
      "Content-Type": "application/json",
      "Content-Disposition": 'attachment; filename="ratelimit.cpuprofile"',
    });
    res.end(JSON.stringify(profile));
  } finally {
    session.disconnect();
    cpuProfileRunning = false;
  }
}

async function heapSnapshot(res: http.ServerResponse): Promise<void> {
  const session = new Session();
  session.connect();
  try {
    res.writeHead(200, {
      "Content-Type": "application/json",
      "Content-Disposition": 'attachment; filename="ratelimit.heapsnapshot"',
    });
    // The snapshot arrives in chunks while the process is paused; they are sent as they come.
    session.on("HeapProfiler.addHeapSnapshotChunk", (m) => {
      res.write(m.params.chunk);
    });
    await session.post("HeapProfiler.takeHeapSnapshot", { reportProgress: false });
    res.end();
  } finally {
    session.disconnect();
  }
}

/** Answers the /debug/pprof/ paths; false for any other path. */
export function handlePprof(req: http.IncomingMessage, res: http.ServerResponse): boolean {
  const url = new URL(req.url ?? "/", "http://debug");
  if (url.pathname === "/debug/pprof") {
    res.writeHead(301, { Location: PPROF_PREFIX });
    res.end();
    return true;
  }
  if (!url.pathname.startsWith(PPROF_PREFIX)) return false;
  const name = url.pathname.slice(PPROF_PREFIX.length);
  const failed = (err: Error) => {
    if (!res.headersSent) text(res, 500, `profiling failed: ${err.message}\n`);
    else res.destroy(err);
  };
  if (name === "") text(res, 200, index());
  else if (name === "profile") cpuProfile(url.searchParams, res).catch(failed);
  else if (name === "heap") heapSnapshot(res).catch(failed);
  else if (name === "cmdline") text(res, 200, `${process.argv.join("\0")}`);
  else text(res, 404, `Not Found: ${url.pathname}; the profiles are:\n${index()}`);
  return true;
}
