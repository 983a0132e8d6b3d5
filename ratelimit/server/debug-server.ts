// The debug listener on DEBUG_HOST:DEBUG_PORT: `/` lists the paths, `/rlconfig`
// dumps the loaded rules, `/stats` the current statistics as `name: value` lines,
// `/debug/pprof/` CPU profiles and heap snapshots (see pprof.ts).

import http from "node:http";
import type { Logger } from "../../common/logger.js";
import { dumpConfig } from "../config/rules.js";
import type { RateLimitService } from "../service/service.js";
import type { StatsStore } from "../stats/store.js";
import { type Listener, listen } from "./http-server.js";
import { handlePprof, PPROF_PREFIX } from "./pprof.js";

const PATHS: Record<string, string> = {
  "/rlconfig": "print out the currently loaded configuration for debugging",
  "/stats": "print out stats",
  [PPROF_PREFIX]: "CPU profile and heap snapshot (Node inspector formats)",
};

export async function startDebugServer(
  host: string,
  port: number,
  service: RateLimitService,
  stats: StatsStore,
  logger: Logger,
  opts: { exclusive?: boolean } = {},
): Promise<Listener> {
  const server = http.createServer((req, res) => {
    if (handlePprof(req, res)) return;
    const url = (req.url ?? "/").split("?")[0];
    let body: string | undefined;
    if (url === "/")
      body = Object.entries(PATHS)
        .map(([p, d]) => `${p}: ${d}\n`)
        .join("");
    else if (url === "/rlconfig") {
      const config = service.getConfig();
      body = config ? dumpConfig(config) : "";
    } else if (url === "/stats") body = stats.dump();
    if (body === undefined) {
      res.writeHead(404, { "Content-Type": "text/plain" });
      res.end("Not Found\n");
      return;
    }
    res.writeHead(200, { "Content-Type": "text/plain; charset=utf-8" });
    res.end(body);
  });
  const l = await listen(server, host, port, opts.exclusive);
  logger.info({ address: `${host}:${l.port}` }, "debug server listening");
  return l;
}
