// OpenTelemetry tracing (TRACING_ENABLED): one server span per ShouldRateLimit call
// and per POST /json, exported over OTLP/HTTP or OTLP/gRPC (TRACING_EXPORTER_PROTOCOL)
// to the endpoint of the standard OTEL_EXPORTER_OTLP_* variables, in batches, flushed
// on shutdown. A caller's W3C `traceparent` makes the span its child (Envoy sends one
// when it traces). The SDK is imported only when tracing is on: off, it costs nothing.

import { randomUUID } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import type { Attributes, Context, Span, Tracer } from "@opentelemetry/api";
import type { Logger } from "../common/logger.js";
import {
  type RateLimitRequest,
  type RateLimitResponse,
  RateLimitResponse_Code,
} from "../proto/gen/envoy/service/ratelimit/v3/rls.js";
import type { TracingSettings } from "./settings.js";

export const GRPC_METHOD = "envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit";
const SHUTDOWN_TIMEOUT_MS = 5000;

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

/** Where the exporter sends, as the OTLP exporters resolve it (for the start log). */
function endpoint(s: TracingSettings, env: NodeJS.ProcessEnv): string {
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  if (traces) return traces;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (s.exporterProtocol === "grpc") return base || "http://localhost:4317";
  return base ? `${base.replace(/\/$/, "")}/v1/traces` : "http://localhost:4318/v1/traces";
}

function codeName(code: RateLimitResponse_Code): string {
  return RateLimitResponse_Code[code] ?? String(code);
}

/** Starts the tracer provider, or returns undefined (nothing loaded) when TRACING_ENABLED is off. */
export async function startTracing(s: TracingSettings, logger: Logger): Promise<Tracing | undefined> {
  if (!s.enabled) return undefined;
  const [api, core, resources, sdk, semconv] = await Promise.all([
    import("@opentelemetry/api"),
    import("@opentelemetry/core"),
    import("@opentelemetry/resources"),
    import("@opentelemetry/sdk-trace-base"),
    import("@opentelemetry/semantic-conventions"),
  ]);
  const exporter =
    s.exporterProtocol === "grpc"
      ? new (await import("@opentelemetry/exporter-trace-otlp-grpc")).OTLPTraceExporter()
      : s.httpEncoding === "json"
        ? new (await import("@opentelemetry/exporter-trace-otlp-http")).OTLPTraceExporter()
        : new (await import("@opentelemetry/exporter-trace-otlp-proto")).OTLPTraceExporter();

  // Export failures surface through the SDK's diagnostics (often an error serialized as
  // JSON): route them to the service's log with the destination.
  const target = endpoint(s, process.env);
  const text = (msg: string): string => {
    try {
      const o = JSON.parse(msg) as { message?: unknown };
      if (typeof o.message === "string") return o.message;
    } catch {}
    return msg;
  };
  api.diag.setLogger(
    {
      error: (msg) => logger.error({ endpoint: target }, `tracing: ${text(msg)}`),
      warn: (msg) => logger.warn({ endpoint: target }, `tracing: ${text(msg)}`),
      info: (msg) => logger.debug(`tracing: ${msg}`),
      debug: () => {},
      verbose: () => {},
    },
    { logLevel: api.DiagLogLevel.WARN, suppressOverrideMessage: true },
  );

  const instanceId = s.serviceInstanceId || randomUUID();
  const resource = resources
    .defaultResource()
    .merge(resources.detectResources({ detectors: [resources.envDetector] }))
    .merge(
      resources.resourceFromAttributes({
        [semconv.ATTR_SERVICE_NAME]: s.serviceName,
        [semconv.ATTR_SERVICE_INSTANCE_ID]: instanceId,
        ...(s.serviceNamespace ? { [semconv.ATTR_SERVICE_NAMESPACE]: s.serviceNamespace } : {}),
      }),
    );
  const provider = new sdk.BasicTracerProvider({
    resource,
    // A caller's sampling decision is kept; the rate applies to calls that start a trace here.
    sampler: new sdk.ParentBasedSampler({ root: new sdk.TraceIdRatioBasedSampler(s.samplingRate) }),
    spanProcessors: [new sdk.BatchSpanProcessor(exporter)],
  });
  const tracer: Tracer = provider.getTracer("ratelimit");
  const propagator = new core.W3CTraceContextPropagator();
  logger.info(
    {
      protocol: s.exporterProtocol === "grpc" ? "grpc" : `http/${s.httpEncoding}`,
      endpoint: target,
      serviceName: s.serviceName,
      serviceInstanceId: instanceId,
      samplingRate: s.samplingRate,
    },
    "tracing enabled",
  );

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
    async shutdown() {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((resolve) => {
        timer = setTimeout(() => {
          logger.warn("tracing: spans not exported within 5 s at shutdown are dropped");
          resolve();
        }, SHUTDOWN_TIMEOUT_MS);
      });
      await Promise.race([
        provider
          .shutdown()
          .catch((err: Error) =>
            logger.warn({ endpoint: target, err: err.message }, "tracing: exporting the last spans failed"),
          ),
        timeout,
      ]);
      clearTimeout(timer);
    },
  };
}
