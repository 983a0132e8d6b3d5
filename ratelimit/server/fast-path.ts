// ShouldRateLimit served straight off node:http2 (GRPC_SERVER=fast, the default): the hot
// call skips grpc-js's per-call objects, interceptors and stream wrappers, which cost more
// CPU per call than the decision itself (docs/performance/ratelimit.md). It does what the
// grpc-js handler in grpc-server.ts does, with the same statistics, tracing and errors:
// content type, the client SAN check, grpc-timeout, one length-prefixed message (no
// compression: a compressed message is refused with UNIMPLEMENTED), the answer with
// grpc-status/grpc-message trailers, and nothing sent once the client has cancelled.

import http2 from "node:http2";
import type { TLSSocket } from "node:tls";
import type { Logger } from "../../common/logger.js";
import type { RateLimitRequest, RateLimitResponse } from "../../proto/gen/envoy/service/ratelimit/v3/rls.js";
import type { RateLimitService } from "../service/service.js";
import { SERVICE_STATS, type StatsStore } from "../stats/store.js";
import type { Tracing } from "../tracing/spans.js";
import { dnsNames } from "./client-san.js";
import { CallError, frameMessage, grpcTimeoutMs, Status, UnaryMessageReader } from "./grpc-framing.js";
import { decodeRequest } from "./request-decoding.js";
import { encodeResponse } from "./response-encoding.js";
import type { StreamHandler } from "./stream-routing.js";

export const SHOULD_RATE_LIMIT_PATH = "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit";

const RESPONSE_HEADERS = { ":status": 200, "content-type": "application/grpc+proto" };
const OK_TRAILERS = { "grpc-status": "0", "grpc-message": "OK" };
const ignore = () => {};

export interface FastPathContext {
  service: RateLimitService;
  stats: StatsStore;
  logger: Logger;
  tracing: Tracing | undefined;
  /** GRPC_CLIENT_TLS_SAN with mutual TLS, else "". */
  clientSan: string;
}

export function shouldRateLimitHandler(ctx: FastPathContext): StreamHandler {
  const wantedSan = ctx.clientSan.toLowerCase();
  /** Each session's SAN verdict: its certificate does not change while it lasts. */
  const sanVerdicts = new WeakMap<http2.Http2Session, boolean>();
  const sanAccepted = (session: http2.Http2Session | undefined): boolean => {
    if (!session) return false;
    let ok = sanVerdicts.get(session);
    if (ok === undefined) {
      const cert = (session.socket as TLSSocket).getPeerCertificate?.();
      ok = dnsNames(cert).some((n) => n.toLowerCase() === wantedSan);
      sanVerdicts.set(session, ok);
    }
    return ok;
  };

  return (stream, headers) => {
    // Errors of the stream (a reset, a dead session) also close it, which ends the call.
    stream.on("error", ignore);
    const contentType = headers["content-type"];
    if (typeof contentType !== "string" || !contentType.startsWith("application/grpc")) {
      // As grpc-js: not a gRPC call, so an HTTP answer.
      stream.respond({ ":status": http2.constants.HTTP_STATUS_UNSUPPORTED_MEDIA_TYPE }, { endStream: true });
      return;
    }
    new FastCall(stream, headers, ctx, wantedSan !== "" && !sanAccepted(stream.session));
  };
}

/** One ShouldRateLimit call, from its headers to its trailers. */
class FastCall {
  private done = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly reader = new UnaryMessageReader(SHOULD_RATE_LIMIT_PATH);

  constructor(
    private readonly stream: http2.ServerHttp2Stream,
    private readonly headers: http2.IncomingHttpHeaders,
    private readonly ctx: FastPathContext,
    sanRefused: boolean,
  ) {
    stream.on("close", () => this.finish());
    if (sanRefused) {
      ctx.logger.debug({ method: SHOULD_RATE_LIMIT_PATH }, "client certificate refused");
      this.fail(
        new CallError(
          Status.UNAUTHENTICATED,
          `client certificate does not carry the DNS name ${ctx.clientSan} (GRPC_CLIENT_TLS_SAN)`,
        ),
      );
      return;
    }
    const timeout = headers["grpc-timeout"];
    if (typeof timeout === "string") {
      try {
        const ms = grpcTimeoutMs(timeout);
        this.timer = setTimeout(
          () => this.fail(new CallError(Status.DEADLINE_EXCEEDED, "Deadline exceeded")),
          ms,
        );
      } catch (err) {
        this.fail(err);
        return;
      }
    }
    stream.on("data", (chunk: Buffer) => {
      if (this.done) return;
      try {
        this.reader.push(chunk);
      } catch (err) {
        this.fail(err);
      }
    });
    stream.on("end", () => {
      if (!this.done) this.decide();
    });
  }

  private decide(): void {
    let request: RateLimitRequest;
    try {
      const { message, compressed } = this.reader.finish();
      if (compressed) throw this.compressionError();
      try {
        request = decodeRequest(message);
      } catch (err) {
        throw new CallError(Status.INTERNAL, `Error deserializing request: ${(err as Error).message}`);
      }
    } catch (err) {
      this.fail(err);
      return;
    }
    const { service, stats, logger, tracing } = this.ctx;
    const started = performance.now();
    stats.inc(SERVICE_STATS.totalRequests);
    const span = tracing?.grpcSpan((name) => {
      const v = this.headers[name];
      return Array.isArray(v) ? v[0] : v;
    });
    span?.setRequest(request);
    service.shouldRateLimit(request).then(
      (response) => {
        stats.timing(SERVICE_STATS.responseTime, performance.now() - started);
        this.answer(response);
        span?.end({ response, grpcStatus: "OK" });
      },
      (err: Error) => {
        stats.timing(SERVICE_STATS.responseTime, performance.now() - started);
        logger.debug({ err: err.message, domain: request.domain }, "ShouldRateLimit failed");
        this.fail(new CallError(Status.UNKNOWN, err.message));
        span?.end({ error: err, grpcStatus: "UNKNOWN" });
      },
    );
  }

  /** Only uncompressed messages are read: say which encodings are (grpc-accept-encoding), as gRPC over HTTP/2 asks. */
  private compressionError(): CallError {
    const encoding = this.headers["grpc-encoding"];
    if (typeof encoding !== "string" || encoding === "identity") {
      return new CallError(Status.INTERNAL, "a message flagged as compressed without a grpc-encoding header");
    }
    return new CallError(
      Status.UNIMPLEMENTED,
      `Received message compressed with unsupported encoding "${encoding}" (this server accepts identity only)`,
    );
  }

  private answer(response: RateLimitResponse): void {
    if (this.done || this.stream.closed || this.stream.destroyed) return;
    this.finish();
    const stream = this.stream;
    const frame = frameMessage(encodeResponse(response));
    stream.respond(RESPONSE_HEADERS, { waitForTrailers: true });
    stream.once("wantTrailers", () => stream.sendTrailers(OK_TRAILERS));
    stream.end(frame);
  }

  /** A trailers-only answer with the error's status (nothing once the call is over). */
  private fail(err: unknown): void {
    if (this.done) return;
    this.finish();
    const stream = this.stream;
    if (stream.closed || stream.destroyed || stream.headersSent) return;
    const e = err instanceof CallError ? err : new CallError(Status.INTERNAL, String(err));
    const trailers: http2.OutgoingHttpHeaders = {
      ...RESPONSE_HEADERS,
      "grpc-status": String(e.code),
      "grpc-message": encodeURI(e.details),
    };
    if (e.code === Status.UNIMPLEMENTED && this.headers["grpc-encoding"])
      trailers["grpc-accept-encoding"] = "identity";
    stream.respond(trailers, { endStream: true });
    // The rest of the body, if any, is read and dropped so the stream can close.
    stream.resume();
  }

  private finish(): void {
    this.done = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
