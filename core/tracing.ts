// Tracing of deliveries (--tracing): the consumed message (or POST /events) opens a
// span, a child of the W3C `traceparent` the event carries when it has one; Temporal's
// OpenTelemetry interceptors carry the context into the delivery workflow (its start,
// run and activities become spans, the workflow's exported through a sink); the send
// activity's POST carries `traceparent` to the receiver. Exported over OTLP with the
// rate limit service's setup (common/otel.ts). Off, nothing of it is loaded.

import type { Context, Tracer } from "@opentelemetry/api";
import type {
  OpenTelemetryPlugin,
  OpenTelemetryWorkflowClientInterceptor,
} from "@temporalio/interceptors-opentelemetry-v2";
import type { Logger } from "../common/logger.js";
import { type OtelExportSettings, otlpHttpEncoding, startTracerProvider } from "../common/otel.js";

/** --tracing* flags of the webhooks service (ratelimit has its own TRACING_* settings). */
export interface DeliveryTracingOptions {
  enabled: boolean;
  exporterProtocol: "http" | "grpc";
  serviceName: string;
  samplingRate: number;
}

export interface DeliveryTracing {
  /** Worker (and bundler) plugin: workflow and activity interceptors, the workflow span sink. */
  plugin: OpenTelemetryPlugin;
  /** Propagates the active context into the workflows a client starts. */
  clientInterceptor: OpenTelemetryWorkflowClientInterceptor;
  /**
   * Runs `fn` inside a span named `name`, a child of the event's `traceparent` (when it
   * carries a valid one), so the workflow starts it makes join the trace.
   */
  inSpan<T>(
    name: string,
    attributes: Record<string, string | number>,
    parent: EventTrace,
    fn: () => Promise<T>,
  ): Promise<T>;
  shutdown(): Promise<void>;
}

/** An event's W3C trace context, as the platform may put it in the message. */
export interface EventTrace {
  traceparent?: string | undefined;
  tracestate?: string | undefined;
}

/**
 * Starts an event's deliveries inside its span when tracing is on (the raw message is
 * read for `traceparent` only then), else just starts them.
 */
export function withEventSpan<T>(
  tracing: DeliveryTracing | undefined,
  name: string,
  attributes: Record<string, string | number>,
  trace: () => EventTrace,
  fn: () => Promise<T>,
): Promise<T> {
  return tracing ? tracing.inSpan(name, attributes, trace(), fn) : fn();
}

/** `traceparent`/`tracestate` of a raw event message (read only when tracing is on). */
export function eventTrace(data: Uint8Array | string): EventTrace {
  try {
    const m = JSON.parse(typeof data === "string" ? data : Buffer.from(data).toString("utf8")) as Record<
      string,
      unknown
    >;
    return {
      traceparent: typeof m.traceparent === "string" ? m.traceparent : undefined,
      tracestate: typeof m.tracestate === "string" ? m.tracestate : undefined,
    };
  } catch {
    return {};
  }
}

export async function startDeliveryTracing(
  s: DeliveryTracingOptions,
  logger: Logger,
): Promise<DeliveryTracing | undefined> {
  if (!s.enabled) return undefined;
  const [api, core, hooks, temporalOtel] = await Promise.all([
    import("@opentelemetry/api"),
    import("@opentelemetry/core"),
    import("@opentelemetry/context-async-hooks"),
    import("@temporalio/interceptors-opentelemetry-v2"),
  ]);
  const settings: OtelExportSettings = {
    exporterProtocol: s.exporterProtocol,
    httpEncoding: otlpHttpEncoding(process.env),
    serviceName: s.serviceName,
    serviceNamespace: process.env.TRACING_SERVICE_NAMESPACE ?? "",
    serviceInstanceId: process.env.TRACING_SERVICE_INSTANCE_ID ?? "",
    samplingRate: s.samplingRate,
  };
  const otel = await startTracerProvider(settings, logger);
  // The interceptors use the global API: the provider, W3C propagation, and a context
  // that follows async calls (so an activity's POST sees the activity's span).
  api.trace.setGlobalTracerProvider(otel.provider);
  api.propagation.setGlobalPropagator(new core.W3CTraceContextPropagator());
  api.context.setGlobalContextManager(new hooks.AsyncLocalStorageContextManager().enable());
  const tracer: Tracer = otel.provider.getTracer("webhooks");

  const parentOf = (t: EventTrace): Context =>
    t.traceparent
      ? api.propagation.extract(api.ROOT_CONTEXT, {
          traceparent: t.traceparent,
          tracestate: t.tracestate ?? "",
        })
      : api.ROOT_CONTEXT;

  return {
    plugin: new temporalOtel.OpenTelemetryPlugin({
      resource: otel.resource,
      spanProcessor: otel.spanProcessor,
      tracer,
    }),
    clientInterceptor: new temporalOtel.OpenTelemetryWorkflowClientInterceptor({ tracer }),
    inSpan(name, attributes, parent, fn) {
      return tracer.startActiveSpan(
        name,
        { kind: api.SpanKind.CONSUMER, attributes },
        parentOf(parent),
        async (span) => {
          try {
            return await fn();
          } catch (err) {
            span.recordException(err as Error);
            span.setStatus({ code: api.SpanStatusCode.ERROR, message: (err as Error).message });
            throw err;
          } finally {
            span.end();
          }
        },
      );
    },
    shutdown: () => otel.shutdown(),
  };
}
