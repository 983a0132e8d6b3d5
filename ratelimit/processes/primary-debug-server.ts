// The debug listener of a service running as several processes: `/stats` shows the sum
// of all processes' statistics; `/rlconfig` and `/debug/pprof/` (a profile is always of
// one process) are forwarded to a serving process's private debug listener, the first
// unless `?process=K` names another, and `/` says so.

import type { Worker } from "node:cluster";
import http from "node:http";
import type { Logger } from "../../common/logger.js";
import { type Listener, listen } from "../server/http-server.js";
import type { StatsStore } from "../stats/store.js";

/** The processes that reported serving, by slot (1..N); a replacement takes its predecessor's slot. */
export type Members = Map<number, { worker: Worker; debugPort: number }>;

function text(res: http.ServerResponse, status: number, body: string): void {
  res.writeHead(status, { "Content-Type": "text/plain; charset=utf-8" });
  res.end(body);
}

function index(processes: number): string {
  return (
    "/rlconfig: print out the currently loaded configuration for debugging\n" +
    "/stats: print out stats (the sum over all service processes)\n" +
    "/debug/pprof/: CPU profile and heap snapshot (Node inspector formats)\n" +
    `\nThis service runs ${processes} processes. /rlconfig and /debug/pprof/ are answered by ` +
    `process 1, or by process K with ?process=K (1 to ${processes}); /stats?process=K shows one process's own.\n`
  );
}

export async function startPrimaryDebugServer(
  host: string,
  port: number,
  stats: StatsStore,
  members: Members,
  logger: Logger,
): Promise<Listener> {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://debug");
    const chosen = url.searchParams.get("process");
    if (url.pathname === "/") return text(res, 200, index(members.size));
    if (url.pathname === "/stats" && chosen === null) return text(res, 200, stats.dump());
    const slot = chosen === null ? 1 : Number(chosen);
    const member = members.get(slot);
    if (!Number.isInteger(slot) || member === undefined)
      return text(res, 400, `process=${chosen}: expected a process number from 1 to ${members.size}\n`);
    if (member.worker.isDead())
      return text(res, 503, `process ${slot} is not serving right now (restarting); try again shortly\n`);
    const forward = http.request(
      { host: "127.0.0.1", port: member.debugPort, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on("error", (err) => {
      if (!res.headersSent) text(res, 502, `process ${slot} did not answer: ${err.message}\n`);
      else res.destroy(err);
    });
    // A client that gives up ends a CPU profile early, as it does with one process.
    res.on("close", () => forward.destroy());
    req.pipe(forward);
  });
  const l = await listen(server, host, port);
  logger.info({ address: `${host}:${l.port}` }, "debug server listening");
  return l;
}
