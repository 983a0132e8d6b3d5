// The HTTP/1.1 listener on HOST:PORT: /json (a decision in proto3 JSON form, from the
// body whatever the method, as the reference does;
// 200 OK, 429 over limit, 4xx naming what is wrong with a malformed or refused
// request, 500 when the counter store fails; every error is a JSON body) and
// GET /healthcheck (200 "OK", or 500 naming the unhealthy components).

import http from "node:http";
import type { AddressInfo } from "node:net";
import { answerClientErrors } from "../../common/http-client-errors.js";
import type { Logger } from "../../common/logger.js";
import { decodeUtf8 } from "../../common/strict-text.js";
import { RateLimitResponse_Code } from "../../proto/gen/envoy/service/ratelimit/v3/rls.js";
import { CacheError } from "../limiter/counter-store.js";
import type { RateLimitService } from "../service/service.js";
import type { Tracing } from "../tracing/spans.js";
import type { Health } from "./health.js";
import { JsonRequestError, requestFromJson, responseToJson } from "./json-codec.js";

const MAX_BODY_BYTES = 4 * 1024 * 1024;

export interface Listener {
  server: http.Server;
  port: number;
  close(): Promise<void>;
}

/** A request refused before it reaches the service, with the status that says why. */
class HttpError extends JsonRequestError {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
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

/** The error body of every /json failure: `{"error":{"status","message"}}`. */
export function errorJson(status: number, message: string): string {
  return JSON.stringify({ error: { status, message } });
}

function sendError(res: http.ServerResponse, status: number, message: string): void {
  send(res, status, errorJson(status, message), "application/json");
}

/**
 * The body of POST /json as text: JSON (no Content-Type is taken as JSON, as
 * the reference does), UTF-8, not compressed, at most 4 MiB. Anything else is
 * refused before a byte of it is parsed.
 */
async function readJsonBody(req: http.IncomingMessage): Promise<string> {
  const type = req.headers["content-type"];
  if (type !== undefined) {
    const [media = "", ...params] = type.split(";").map((p) => p.trim().toLowerCase());
    if (media !== "application/json" && !/^application\/[^/]+\+json$/.test(media))
      throw new HttpError(415, `Content-Type must be application/json, got "${type}"`);
    const charset = params
      .find((p) => p.startsWith("charset="))
      ?.slice(8)
      .replace(/"/g, "");
    if (charset !== undefined && charset !== "utf-8" && charset !== "utf8")
      throw new HttpError(415, `unsupported charset "${charset}": send UTF-8`);
  }
  const encoding = req.headers["content-encoding"];
  if (encoding !== undefined && encoding.trim().toLowerCase() !== "identity")
    throw new HttpError(415, `unsupported Content-Encoding "${encoding}": send the JSON uncompressed`);
  if (Number(req.headers["content-length"]) > MAX_BODY_BYTES)
    throw new HttpError(413, `request body larger than ${MAX_BODY_BYTES} bytes`);
  // Read by events, not `for await`: leaving that loop early destroys the request (and
  // its connection), and the 413 would never reach the client.
  const chunks = await new Promise<Buffer[]>((resolve, reject) => {
    const out: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        req.off("data", onData);
        req.pause();
        reject(new HttpError(413, `request body larger than ${MAX_BODY_BYTES} bytes`));
      } else out.push(chunk);
    };
    req.on("data", onData);
    req.once("end", () => resolve(out));
    req.once("close", () => {
      if (!req.readableEnded)
        reject(new HttpError(400, "the connection closed before the request body was complete"));
    });
    req.once("error", (err) =>
      reject(new HttpError(400, `the request body was not received: ${err.message}`)),
    );
  });
  try {
    return decodeUtf8(Buffer.concat(chunks));
  } catch (err) {
    throw new HttpError(400, (err as Error).message);
  }
}

/** Bytes of a refused body read and dropped before the 413, and how long that may take. */
const DRAIN_LIMIT_BYTES = 64 * 1024 * 1024;
const DRAIN_TIMEOUT_MS = 5000;

/** Reads and drops the rest of a request body, up to the bounds above. */
function drainBody(req: http.IncomingMessage): Promise<void> {
  return new Promise((resolve) => {
    if (req.readableEnded || req.destroyed) return resolve();
    let read = 0;
    const done = () => {
      clearTimeout(timer);
      req.off("data", onData);
      resolve();
    };
    const onData = (chunk: Buffer) => {
      read += chunk.length;
      if (read > DRAIN_LIMIT_BYTES) done();
    };
    const timer = setTimeout(done, DRAIN_TIMEOUT_MS);
    req.on("data", onData);
    req.once("end", done);
    req.once("close", done);
    req.resume();
  });
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
      const problems = health.problems();
      return problems.length ? send(res, 500, `${problems.join("\n")}\n`) : send(res, 200, "OK");
    }
    if (url === "/json") {
      // Any method is decided from its body, as by the reference (so GET without a body is 400).
      const span = tracing?.httpSpan(req.method ?? "POST", "/json", req.headers);
      readJsonBody(req)
        .then((text) => {
          if (text.trim() === "")
            throw new HttpError(400, "empty request body: send the request as JSON, {domain, descriptors}");
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
              sendError(res, 500, err.message);
              span?.end({ error: err, httpStatus: 500 });
            } else {
              const status = err instanceof HttpError ? err.status : 400;
              // A body refused for its size is still arriving: read and drop it (up to a
              // bound) before answering, or closing the connection on unread data resets it
              // and the client, still writing, never sees the 413.
              const answered = status === 413 ? drainBody(req) : Promise.resolve();
              void answered.then(() => {
                res.setHeader("Connection", "close");
                sendError(res, status, err.message);
                span?.end({ error: err, httpStatus: status });
              });
            }
          },
        );
      return;
    }
    sendError(res, 404, `no route for ${url}: the paths are POST /json and GET /healthcheck`);
  });
  server.keepAliveTimeout = 65_000;
  answerClientErrors(server, (status, message) => ({
    contentType: "application/json",
    body: errorJson(status, message),
  }));
  const l = await listen(server, host, port);
  logger.info({ address: `${host}:${l.port}` }, "HTTP server listening");
  return l;
}
