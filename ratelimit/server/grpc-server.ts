// The gRPC listener: envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit,
// the standard health service (service name `ratelimit` for the service's health,
// "" for the server itself) and server reflection, on GRPC_HOST:GRPC_PORT or the unix socket GRPC_UDS,
// in plain text or TLS (GRPC_SERVER_USE_TLS; mutual with GRPC_CLIENT_TLS_CACERT).
// Errors are answered with status UNKNOWN and the error text, as the reference does.
// With GRPC_SERVER=fast (the default) ShouldRateLimit's streams are served by fast-path.ts
// on grpc-js's own listener (stream-routing.ts); grpc-js serves the rest.

import * as grpc from "@grpc/grpc-js";
import type { Logger } from "../../common/logger.js";
import {
  type RateLimitRequest,
  type RateLimitResponse,
  RateLimitServiceService,
} from "../../proto/gen/envoy/service/ratelimit/v3/rls.js";
import type { RateLimitService } from "../service/service.js";
import type { Settings } from "../settings/environment.js";
import { SERVICE_STATS, type StatsStore } from "../stats/store.js";
import type { Tracing } from "../tracing/spans.js";
import { clientSanInterceptor } from "./client-san.js";
import { SHOULD_RATE_LIMIT_PATH, shouldRateLimitHandler } from "./fast-path.js";
import { GrpcHealth } from "./grpc-health.js";
import { createGrpcServerTls, type GrpcServerTls } from "./grpc-tls.js";
import type { Health } from "./health.js";
import { addLazyReflection } from "./reflection.js";
import { decodeRequest } from "./request-decoding.js";
import { encodeResponse } from "./response-encoding.js";
import { routeStreams } from "./stream-routing.js";

export const HEALTH_SERVICE_NAME = "ratelimit";

/** The generated service with this service's own reading and writing of its messages (less garbage per call). */
const SERVICE: typeof RateLimitServiceService = {
  shouldRateLimit: {
    ...RateLimitServiceService.shouldRateLimit,
    requestDeserialize: decodeRequest,
    responseSerialize: encodeResponse,
  },
};

export interface GrpcListener {
  server: grpc.Server;
  /** `host:port` or `unix:/path`. */
  address: string;
  port: number;
  /** Present when GRPC_SERVER_USE_TLS is on. */
  tls: GrpcServerTls | undefined;
  shutdown(graceMs: number): Promise<void>;
}

export async function startGrpcServer(
  settings: Settings,
  service: RateLimitService,
  stats: StatsStore,
  health: Health,
  logger: Logger,
  tracing?: Tracing,
): Promise<GrpcListener> {
  // Channelz bookkeeping costs time on every call and nothing here reads it.
  const options: grpc.ServerOptions = { "grpc.enable_channelz": 0 };
  if (settings.grpcMaxConnectionAgeMs !== undefined)
    options["grpc.max_connection_age_ms"] = settings.grpcMaxConnectionAgeMs;
  if (settings.grpcMaxConnectionAgeGraceMs !== undefined) {
    options["grpc.max_connection_age_grace_ms"] = settings.grpcMaxConnectionAgeGraceMs;
  }
  // Read first: a missing or bad certificate file stops the start before anything listens.
  const tls = settings.grpcServerUseTls ? createGrpcServerTls(settings, logger) : undefined;
  if (tls && settings.grpcClientTlsSan)
    options.interceptors = [clientSanInterceptor(settings.grpcClientTlsSan, logger)];
  const server = new grpc.Server(options);

  if (settings.grpcServer === "fast") {
    const clientSan = tls ? settings.grpcClientTlsSan : "";
    routeStreams(
      server,
      SHOULD_RATE_LIMIT_PATH,
      shouldRateLimitHandler({ service, stats, logger, tracing, clientSan }),
    );
  } else {
    server.addService(SERVICE, {
      shouldRateLimit(
        call: grpc.ServerUnaryCall<RateLimitRequest, RateLimitResponse>,
        callback: grpc.sendUnaryData<RateLimitResponse>,
      ) {
        const started = performance.now();
        stats.inc(SERVICE_STATS.totalRequests);
        const span = tracing?.grpcSpan((name) => call.metadata.get(name)[0]?.toString());
        span?.setRequest(call.request);
        service.shouldRateLimit(call.request).then(
          (response) => {
            stats.timing(SERVICE_STATS.responseTime, performance.now() - started);
            callback(null, response);
            span?.end({ response, grpcStatus: "OK" });
          },
          (err: Error) => {
            stats.timing(SERVICE_STATS.responseTime, performance.now() - started);
            logger.debug({ err: err.message, domain: call.request.domain }, "ShouldRateLimit failed");
            callback({ code: grpc.status.UNKNOWN, details: err.message });
            span?.end({ error: err, grpcStatus: "UNKNOWN" });
          },
        );
      },
    });
  }

  const healthImpl = new GrpcHealth({ "": "SERVING", [HEALTH_SERVICE_NAME]: "SERVING" });
  healthImpl.addToServer(server);
  // `ratelimit` follows every health component; "" (the server as a whole, what
  // grpc_health_probe asks by default) stays SERVING as with the reference, except
  // that it also fails once the process is shutting down, so a probe sees the drain.
  health.onChange((ok) => {
    healthImpl.setStatus(HEALTH_SERVICE_NAME, ok ? "SERVING" : "NOT_SERVING");
    healthImpl.setStatus("", health.isTerminating() ? "NOT_SERVING" : "SERVING");
  });
  addLazyReflection(server, logger);

  const address = settings.grpcUds ? `unix:${settings.grpcUds}` : `${settings.grpcHost}:${settings.grpcPort}`;
  const credentials = tls?.credentials ?? grpc.ServerCredentials.createInsecure();
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(address, credentials, (err, p) => (err ? reject(err) : resolve(p)));
  }).catch((err: Error) => {
    tls?.close();
    throw err;
  });
  const bound = settings.grpcUds ? address : `${settings.grpcHost}:${port}`;
  logger.info({ address: bound, tls: tls !== undefined }, "gRPC server listening");

  return {
    server,
    address: bound,
    port,
    tls,
    shutdown: (graceMs: number) =>
      new Promise<void>((resolve) => {
        tls?.close();
        const timer = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, graceMs);
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      }),
  };
}
