// The HTTP/1.1 listener on HOST:PORT: POST /json (a decision in proto3 JSON form;
// 200 OK, 429 over limit, 400 for a malformed or refused request, 500 when the
// counter store fails) and GET /healthcheck (200 "OK", or 500 naming the unhealthy
// components).

import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "../common/logger.js";
import { RateLimitResponse_Code } from "../proto/gen/envoy/service/ratelimit/v3/rls.js";
import { CacheError } from "./counter-store.js";
import type { Health } from "./health.js";
import { JsonRequestError, requestFromJson, responseToJson } from "./json-codec.js";
import type { RateLimitService } from "./service.js";
import type { Tracing } from "./tracing.js";

const MAX_BODY_BYTES = 4 * 1024 * 1024;

export interface Listener {
  server: http.Server;
  port: number;
  close(): Promise<void>;
}

function send(
  res: http.ServerResponse,
  status: number,
  body: string,
  type = "text/plain; charset=utf-8",
): void {
  res.writeHead(status, { "Content-Type": type, "Content-Length": Buffer.byteLength(body) });
  res.end(body);
}

async function readBody(req: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new JsonRequestError(`request body larger than ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** `exclusive`: in a cluster process, a port of its own instead of the listener the processes share. */
export function listen(
  server: http.Server,
  host: string,
  port: number,
  exclusive = false,
): Promise<Listener> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen({ port, host, exclusive }, () => {
      server.off("error", reject);
      resolve({
        server,
        port: (server.address() as AddressInfo).port,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeIdleConnections();
          }),
      });
    });
  });
}

export async function startHttpServer(
  host: string,
  port: number,
  service: RateLimitService,
  health: Health,
  logger: Logger,
  tracing?: Tracing,
): Promise<Listener> {
  const server = http.createServer((req, res) => {
    const url = (req.url ?? "/").split("?")[0];
    if (url === "/healthcheck") {
      if (req.method !== "GET" && req.method !== "HEAD") return send(res, 405, "Method Not Allowed");
      const problems = health.problems();
      return problems.length ? send(res, 500, `${problems.join("\n")}\n`) : send(res, 200, "OK");
    }
    if (url === "/json") {
      if (req.method !== "POST") return send(res, 405, "Method Not Allowed: use POST");
      const span = tracing?.httpSpan("POST", "/json", req.headers);
      readBody(req)
        .then((text) => {
          const request = requestFromJson(text);
          span?.setRequest(request);
          return service.shouldRateLimit(request);
        })
        .then(
          (response) => {
            const status =
              response.overallCode === RateLimitResponse_Code.OK
                ? 200
                : response.overallCode === RateLimitResponse_Code.OVER_LIMIT
                  ? 429
                  : 500;
            send(res, status, JSON.stringify(responseToJson(response)), "application/json");
            span?.end({ response, httpStatus: status });
          },
          (err: Error) => {
            if (err instanceof CacheError) {
              logger.warn({ err: err.message }, "/json: counter store error");
              send(res, 500, `Internal Server Error: ${err.message}\n`);
              span?.end({ error: err, httpStatus: 500 });
            } else {
              send(res, 400, `Bad Request: ${err.message}\n`);
              span?.end({ error: err, httpStatus: 400 });
            }
          },
        );
      return;
    }
    send(res, 404, "Not Found: the paths are POST /json and GET /healthcheck\n");
  });
  server.keepAliveTimeout = 65_000;
  const l = await listen(server, host, port);
  logger.info({ address: `${host}:${l.port}` }, "HTTP server listening");
  return l;
}
