// OpenTelemetry tracing (TRACING_ENABLED): one server span per ShouldRateLimit call
// and per POST /json, exported over OTLP/HTTP or OTLP/gRPC (TRACING_EXPORTER_PROTOCOL)
// to the endpoint of the standard OTEL_EXPORTER_OTLP_* variables, in batches, flushed
// on shutdown. A caller's W3C `traceparent` makes the span its child (Envoy sends one
// when it traces). The SDK is imported only when tracing is on: off, it costs nothing.

import type { IncomingHttpHeaders } from "node:http";
import type { Attributes, Context, Span, Tracer } from "@opentelemetry/api";
import type { Logger } from "../../common/logger.js";
import { startTracerProvider } from "../../common/otel.js";
import {
  type RateLimitRequest,
  type RateLimitResponse,
  RateLimitResponse_Code,
} from "../../proto/gen/envoy/service/ratelimit/v3/rls.js";
import type { TracingSettings } from "../settings/environment.js";

export const GRPC_METHOD = "envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit";

/** A decision's span; `end` may be called once. */
export interface DecisionSpan {
  /** Domain and descriptor count (for /json only known once the body is parsed). */
  setRequest(request: RateLimitRequest): void;
  /** Ends with the answer, or with the error (span status ERROR). */
  end(outcome: {
    response?: RateLimitResponse;
    error?: Error;
    grpcStatus?: string;
    httpStatus?: number;
  }): void;
}

export interface Tracing {
  /** A span for a gRPC call; `header` reads the call's metadata. */
  grpcSpan(header: (name: string) => string | undefined): DecisionSpan;
  httpSpan(method: string, path: string, headers: IncomingHttpHeaders): DecisionSpan;
  /** Exports what is still queued, then stops (bounded, so a dead collector cannot hold the exit). */
  shutdown(): Promise<void>;
}

function codeName(code: RateLimitResponse_Code): string {
  return RateLimitResponse_Code[code] ?? String(code);
}

/** Starts the tracer provider, or returns undefined (nothing loaded) when TRACING_ENABLED is off. */
export async function startTracing(s: TracingSettings, logger: Logger): Promise<Tracing | undefined> {
  if (!s.enabled) return undefined;
  const [api, core, semconv] = await Promise.all([
    import("@opentelemetry/api"),
    import("@opentelemetry/core"),
    import("@opentelemetry/semantic-conventions"),
  ]);
  const otel = await startTracerProvider(s, logger);
  const tracer: Tracer = otel.provider.getTracer("ratelimit");
  const propagator = new core.W3CTraceContextPropagator();

  const parent = (header: (name: string) => string | undefined): Context =>
    propagator.extract(api.ROOT_CONTEXT, undefined, {
      keys: () => ["traceparent", "tracestate"],
      get: (_carrier, key) => header(key),
    });

  const decisionSpan = (span: Span): DecisionSpan => ({
    setRequest(request) {
      span.setAttributes({
        "ratelimit.domain": request.domain,
        "ratelimit.descriptor_count": request.descriptors.length,
      });
    },
    end({ response, error, grpcStatus, httpStatus }) {
      const attrs: Attributes = {};
      if (grpcStatus !== undefined) attrs[semconv.ATTR_RPC_STATUS_CODE] = grpcStatus;
      if (httpStatus !== undefined) attrs[semconv.ATTR_HTTP_RESPONSE_STATUS_CODE] = httpStatus;
      if (response) {
        attrs["ratelimit.overall_code"] = codeName(response.overallCode);
        attrs["ratelimit.over_limit_count"] = response.statuses.filter(
          (st) => st.code === RateLimitResponse_Code.OVER_LIMIT,
        ).length;
      }
      span.setAttributes(attrs);
      if (error) {
        span.recordException(error);
        span.setStatus({ code: api.SpanStatusCode.ERROR, message: error.message });
      }
      span.end();
    },
  });

  return {
    grpcSpan(header) {
      return decisionSpan(
        tracer.startSpan(
          GRPC_METHOD,
          {
            kind: api.SpanKind.SERVER,
            attributes: { [semconv.ATTR_RPC_SYSTEM_NAME]: "grpc", [semconv.ATTR_RPC_METHOD]: GRPC_METHOD },
          },
          parent(header),
        ),
      );
    },
    httpSpan(method, path, headers) {
      const header = (name: string) => {
        const v = headers[name];
        return Array.isArray(v) ? v[0] : v;
      };
      return decisionSpan(
        tracer.startSpan(
          `${method} ${path}`,
          {
            kind: api.SpanKind.SERVER,
            attributes: {
              [semconv.ATTR_HTTP_REQUEST_METHOD]: method,
              [semconv.ATTR_URL_PATH]: path,
              [semconv.ATTR_HTTP_ROUTE]: path,
            },
          },
          parent(header),
        ),
      );
    },
    shutdown: () => otel.shutdown(),
  };
}
