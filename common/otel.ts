// The OpenTelemetry tracer provider both services export with: OTLP over HTTP
// (protobuf, or JSON) or gRPC to the endpoint of the standard OTEL_EXPORTER_OTLP_*
// variables, in batches, with a parent-based ratio sampler, export errors routed to
// the service's log, and a bounded flush at shutdown. The SDK is loaded only here,
// and only by a service that turned tracing on.

import { randomUUID } from "node:crypto";
import type { Logger } from "./logger.js";

export interface OtelExportSettings {
  /** `http` (OTLP/HTTP) or `grpc` (OTLP/gRPC). */
  exporterProtocol: "http" | "grpc";
  /** OTLP/HTTP body encoding: protobuf unless OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL=http/json. */
  httpEncoding: "protobuf" | "json";
  serviceName: string;
  serviceNamespace: string;
  /** Empty: a random version-4 UUID chosen at start. */
  serviceInstanceId: string;
  /** Share of new traces recorded (a caller's sampling decision is kept). */
  samplingRate: number;
}

const SHUTDOWN_TIMEOUT_MS = 5000;

/** Where the exporter sends, as the OTLP exporters resolve it (for the start log). */
export function otlpEndpoint(s: OtelExportSettings, env: NodeJS.ProcessEnv): string {
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  if (traces) return traces;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (s.exporterProtocol === "grpc") return base || "http://localhost:4317";
  return base ? `${base.replace(/\/$/, "")}/v1/traces` : "http://localhost:4318/v1/traces";
}

/** The protobuf/JSON choice of OTLP/HTTP, from the standard variables. */
export function otlpHttpEncoding(env: NodeJS.ProcessEnv): "protobuf" | "json" {
  const p = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL;
  return p === "http/json" ? "json" : "protobuf";
}

export async function startTracerProvider(s: OtelExportSettings, logger: Logger) {
  const [api, resources, sdk, semconv] = await Promise.all([
    import("@opentelemetry/api"),
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
  const endpoint = otlpEndpoint(s, process.env);
  const text = (msg: string): string => {
    try {
      const o = JSON.parse(msg) as { message?: unknown };
      if (typeof o.message === "string") return o.message;
    } catch {}
    return msg;
  };
  api.diag.setLogger(
    {
      error: (msg) => logger.error({ endpoint }, `tracing: ${text(msg)}`),
      warn: (msg) => logger.warn({ endpoint }, `tracing: ${text(msg)}`),
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
  const spanProcessor = new sdk.BatchSpanProcessor(exporter);
  const provider = new sdk.BasicTracerProvider({
    resource,
    sampler: new sdk.ParentBasedSampler({ root: new sdk.TraceIdRatioBasedSampler(s.samplingRate) }),
    spanProcessors: [spanProcessor],
  });
  logger.info(
    {
      protocol: s.exporterProtocol === "grpc" ? "grpc" : `http/${s.httpEncoding}`,
      endpoint,
      serviceName: s.serviceName,
      serviceInstanceId: instanceId,
      samplingRate: s.samplingRate,
    },
    "tracing enabled",
  );

  return {
    provider,
    resource,
    spanProcessor,
    endpoint,
    /** Exports what is still queued, then stops (bounded, so a dead collector cannot hold the exit). */
    async shutdown(): Promise<void> {
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
            logger.warn({ endpoint, err: err.message }, "tracing: exporting the last spans failed"),
          ),
        timeout,
      ]);
      clearTimeout(timer);
    },
  };
}

export type TracerProviderHandle = Awaited<ReturnType<typeof startTracerProvider>>;
