// OpenTelemetry tracing: spans of gRPC and /json decisions arrive at a local OTLP
// collector over HTTP (protobuf and JSON) and gRPC, with the TRACING_* resource, the
// decision's attributes, error status, the caller's trace as parent, the sampling
// rate, and the flush at shutdown. Off, the SDK is not even loaded.

import { spawn } from "node:child_process";
import * as grpc from "@grpc/grpc-js";
import { expect } from "chai";
import type { RateLimitResponse } from "../../proto/gen/envoy/service/ratelimit/v3/rls.js";
import { loadSettings, SettingsError } from "../../ratelimit/settings/environment.js";
import { RateLimitProcess, RuntimeDir, request, uniq } from "./harness.js";
import { OtlpCollector, type ReceivedSpan } from "./otlp-collector.js";

const CONFIG = `domain: trace
descriptors:
  - {key: a, rate_limit: {unit: hour, requests_per_unit: 100}}
  - {key: b, rate_limit: {unit: hour, requests_per_unit: 1}}
`;
const METHOD = "envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit";
const SERVER = 2;
const ERROR = 2;
const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_ID = "00f067aa0ba902b7";

/** ShouldRateLimit with a W3C traceparent in the metadata. */
function callWithParent(svc: RateLimitProcess, sampled: boolean): Promise<RateLimitResponse> {
  const md = new grpc.Metadata();
  md.set("traceparent", `00-${TRACE_ID}-${PARENT_ID}-${sampled ? "01" : "00"}`);
  return new Promise((resolve, reject) =>
    svc
      .grpcClient()
      .shouldRateLimit(request("trace", [[["a", uniq()]]]), md, (err, res) =>
        err ? reject(err) : resolve(res),
      ),
  );
}

function tracingEnv(extra: Record<string, string>): Record<string, string> {
  return { TRACING_ENABLED: "true", ...extra };
}

describe("ratelimit tracing", function () {
  this.timeout(60_000);
  let collector: OtlpCollector;
  let runtime: RuntimeDir;

  before(async () => {
    collector = await OtlpCollector.start();
    runtime = new RuntimeDir({ "trace.yaml": CONFIG });
  });
  after(async () => {
    await collector?.close();
    runtime?.cleanup();
  });

  const spansOf = (instance: string) =>
    collector.spans.filter((s) => s.resource["service.instance.id"] === instance);

  it("exports a span per gRPC and /json decision over OTLP/HTTP (protobuf), flushed at shutdown", async () => {
    const instance = `http-${uniq()}`;
    const svc = await RateLimitProcess.start({
      runtime,
      backend: "memory",
      env: tracingEnv({
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.httpEndpoint,
        OTEL_EXPORTER_OTLP_HEADERS: "x-api-key=secret",
        TRACING_SERVICE_NAME: "rl-test",
        TRACING_SERVICE_NAMESPACE: "edge",
        TRACING_SERVICE_INSTANCE_ID: instance,
      }),
    });
    const b = uniq();
    try {
      await svc.call("trace", [[["a", uniq()]], [["b", b]]]);
      await svc.call("trace", [[["b", b]]]); // over the limit
      await svc.call("", [[["a", "x"]]]).catch(() => {}); // refused
      await callWithParent(svc, true);
      expect(
        (await svc.json({ domain: "trace", descriptors: [{ entries: [{ key: "a", value: "j" }] }] })).status,
      ).to.equal(200);
      expect(
        (await svc.json({ domain: "trace", descriptors: [{ entries: [{ key: "b", value: b }] }] })).status,
      ).to.equal(429);
      expect((await svc.json("{not json")).status).to.equal(400);
      // The batch delay (5 s by default) has not passed: the spans leave at shutdown.
      expect(spansOf(instance)).to.have.length(0);
    } finally {
      expect(await svc.stop()).to.equal(0);
    }

    const spans = spansOf(instance);
    expect(spans).to.have.length(7);
    expect(
      collector.exports.some((e) => e.protocol === "http/protobuf" && e.headers["x-api-key"] === "secret"),
    ).to.equal(true);
    const grpcSpans = spans.filter((s) => s.name === METHOD);
    const jsonSpans = spans.filter((s) => s.name === "POST /json");
    expect([grpcSpans.length, jsonSpans.length]).to.deep.equal([4, 3]);
    for (const s of spans) {
      expect(s.kind).to.equal(SERVER);
      expect(s.resource).to.include({
        "service.name": "rl-test",
        "service.namespace": "edge",
        "service.instance.id": instance,
      });
    }

    const [ok, over, refused, child] = grpcSpans as [ReceivedSpan, ReceivedSpan, ReceivedSpan, ReceivedSpan];
    expect(ok.attributes).to.include({
      "rpc.system.name": "grpc",
      "rpc.method": METHOD,
      "rpc.status_code": "OK",
      "ratelimit.domain": "trace",
      "ratelimit.descriptor_count": 2,
      "ratelimit.overall_code": "OK",
      "ratelimit.over_limit_count": 0,
    });
    expect(ok.status.code).to.equal(0);
    expect(over.attributes).to.include({
      "ratelimit.overall_code": "OVER_LIMIT",
      "ratelimit.over_limit_count": 1,
    });
    expect(refused.attributes).to.include({ "rpc.status_code": "UNKNOWN", "ratelimit.domain": "" });
    expect(refused.status).to.deep.equal({ code: ERROR, message: "rate limit domain must not be empty" });
    expect(refused.events).to.include("exception");
    // The caller's traceparent makes the span part of its trace.
    expect([child.traceId, child.parentSpanId]).to.deep.equal([TRACE_ID, PARENT_ID]);
    expect(ok.parentSpanId).to.equal("");

    const [jsonOk, jsonOver, jsonBad] = jsonSpans as [ReceivedSpan, ReceivedSpan, ReceivedSpan];
    expect(jsonOk.attributes).to.include({
      "http.request.method": "POST",
      "url.path": "/json",
      "http.response.status_code": 200,
      "ratelimit.domain": "trace",
      "ratelimit.descriptor_count": 1,
      "ratelimit.overall_code": "OK",
    });
    expect(jsonOver.attributes).to.include({
      "http.response.status_code": 429,
      "ratelimit.overall_code": "OVER_LIMIT",
    });
    expect(jsonBad.attributes).to.include({ "http.response.status_code": 400 });
    expect(jsonBad.status.code).to.equal(ERROR);
  });

  it("exports over OTLP/gRPC (TRACING_EXPORTER_PROTOCOL=grpc) in batches while running, with the default resource", async () => {
    const svc = await RateLimitProcess.start({
      runtime,
      backend: "memory",
      env: tracingEnv({
        TRACING_EXPORTER_PROTOCOL: "grpc",
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: collector.grpcEndpoint,
        OTEL_EXPORTER_OTLP_HEADERS: "x-api-key=grpc-secret",
        OTEL_BSP_SCHEDULE_DELAY: "100",
      }),
    });
    try {
      const before = collector.spans.length;
      await svc.call("trace", [[["a", uniq()]]]);
      await svc.until("the span over gRPC", async () => collector.spans.length > before);
      const span = collector.spans.at(-1)!;
      expect(span.name).to.equal(METHOD);
      expect(span.attributes).to.include({ "ratelimit.domain": "trace", "ratelimit.overall_code": "OK" });
      expect(span.resource["service.name"]).to.equal("RateLimit");
      expect(String(span.resource["service.instance.id"])).to.match(
        /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
      );
      expect(span.resource).to.not.have.property("service.namespace");
      const last = collector.exports.at(-1)!;
      expect(last.protocol).to.equal("grpc");
      expect(last.headers["x-api-key"]).to.equal("grpc-secret");
    } finally {
      await svc.stop();
    }
  });

  it("sends OTLP/JSON over http when OTEL_EXPORTER_OTLP_PROTOCOL=http/json", async () => {
    const instance = `json-${uniq()}`;
    const svc = await RateLimitProcess.start({
      runtime,
      backend: "memory",
      env: tracingEnv({
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.httpEndpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
        TRACING_SERVICE_INSTANCE_ID: instance,
      }),
    });
    await svc.call("trace", [[["a", uniq()]], [["a", uniq()]], [["a", uniq()]]]);
    await svc.stop();
    const [span] = spansOf(instance);
    expect(span?.attributes).to.include({ "ratelimit.descriptor_count": 3, "ratelimit.overall_code": "OK" });
    expect(collector.exports.some((e) => e.protocol === "http/json")).to.equal(true);
  });

  it("TRACING_SAMPLING_RATE=0 records only calls whose caller sampled them", async () => {
    const instance = `sampled-${uniq()}`;
    const svc = await RateLimitProcess.start({
      runtime,
      backend: "memory",
      env: tracingEnv({
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.httpEndpoint,
        TRACING_SAMPLING_RATE: "0",
        TRACING_SERVICE_INSTANCE_ID: instance,
      }),
    });
    for (let i = 0; i < 5; i++) await svc.call("trace", [[["a", uniq()]]]);
    await callWithParent(svc, false);
    await callWithParent(svc, true);
    await svc.stop();
    const spans = spansOf(instance);
    expect(spans).to.have.length(1);
    expect(spans[0]!.traceId).to.equal(TRACE_ID);
  });

  it("logs export failures and still exits promptly when the collector is unreachable", async () => {
    const svc = await RateLimitProcess.start({
      runtime,
      backend: "memory",
      env: tracingEnv({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:1",
        OTEL_EXPORTER_OTLP_TIMEOUT: "500",
      }),
    });
    await svc.call("trace", [[["a", uniq()]]]);
    const started = Date.now();
    expect(await svc.stop()).to.equal(0);
    expect(Date.now() - started).to.be.below(15_000);
    const failure = svc.output.split("\n").find((l) => l.includes('"@message":"tracing: '));
    expect(failure, svc.output).to.include('"endpoint":"http://127.0.0.1:1/v1/traces"');
  });
});

/** The @opentelemetry modules a child process has loaded after importing the service and starting tracing. */
function loadedOtelModules(enabled: boolean): Promise<string[]> {
  const script = `
    import { createRequire } from "node:module";
    const { startService } = await import(${JSON.stringify(new URL("../../ratelimit/runner.js", import.meta.url).href)});
    const { startTracing } = await import(${JSON.stringify(new URL("../../ratelimit/tracing/spans.js", import.meta.url).href)});
    const { createServiceLogger } = await import(${JSON.stringify(new URL("../../ratelimit/log.js", import.meta.url).href)});
    void startService;
    const tracing = await startTracing({ enabled: ${enabled}, exporterProtocol: "http", httpEncoding: "protobuf",
      serviceName: "x", serviceNamespace: "", serviceInstanceId: "", samplingRate: 1 },
      createServiceLogger({ logLevel: "error", logFormat: "json" }));
    await tracing?.shutdown();
    const cache = createRequire(import.meta.url).cache;
    console.log(JSON.stringify(Object.keys(cache).filter((k) => k.includes("@opentelemetry"))));`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--input-type=module", "-e", script]);
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => {
      out += d;
    });
    child.stderr.on("data", (d) => {
      err += d;
    });
    child.once("close", (code) =>
      code === 0 ? resolve(JSON.parse(out) as string[]) : reject(new Error(`exit ${code}: ${err}`)),
    );
  });
}

describe("ratelimit tracing off", function () {
  this.timeout(30_000);

  it("loads none of the OpenTelemetry SDK", async () => {
    const [off, on] = await Promise.all([loadedOtelModules(false), loadedOtelModules(true)]);
    expect(on.some((m) => m.includes("sdk-trace"))).to.equal(true); // the check sees the SDK when it is loaded
    // The API package alone is allowed: other libraries (prom-client) load it, and it is a no-op without an SDK.
    expect(off.filter((m) => !m.includes("/@opentelemetry/api/"))).to.deep.equal([]);
  });
});

describe("ratelimit tracing and log settings", () => {
  it("has the spec's defaults", () => {
    const s = loadSettings({});
    expect(s.tracing).to.deep.equal({
      enabled: false,
      exporterProtocol: "http",
      httpEncoding: "protobuf",
      serviceName: "RateLimit",
      serviceNamespace: "",
      serviceInstanceId: "",
      samplingRate: 1,
    });
    expect([s.logLevel, s.logFormat]).to.deep.equal(["warn", "text"]);
  });

  it("reads the protocol from TRACING_EXPORTER_PROTOCOL first, then from the OTLP protocol variables", () => {
    expect(loadSettings({ TRACING_EXPORTER_PROTOCOL: "grpc" }).tracing.exporterProtocol).to.equal("grpc");
    expect(loadSettings({ OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" }).tracing.exporterProtocol).to.equal("grpc");
    expect(
      loadSettings({ TRACING_EXPORTER_PROTOCOL: "http", OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "grpc" }).tracing
        .exporterProtocol,
    ).to.equal("http");
    expect(loadSettings({ OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/json" }).tracing.httpEncoding).to.equal(
      "json",
    );
  });

  it("accepts the reference's log level names", () => {
    expect(loadSettings({ LOG_LEVEL: "WARNING" }).logLevel).to.equal("warn");
    expect(loadSettings({ LOG_LEVEL: "panic" }).logLevel).to.equal("fatal");
    expect(loadSettings({ LOG_LEVEL: "Debug" }).logLevel).to.equal("debug");
  });

  it("names every bad value", () => {
    try {
      loadSettings({
        TRACING_ENABLED: "maybe",
        TRACING_EXPORTER_PROTOCOL: "zipkin",
        TRACING_SAMPLING_RATE: "1.5",
        OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318",
        OTEL_EXPORTER_OTLP_TRACES_HEADERS: "api-key",
        OTEL_EXPORTER_OTLP_PROTOCOL: "thrift",
        OTEL_EXPORTER_OTLP_TIMEOUT: "10s",
        OTEL_EXPORTER_OTLP_INSECURE: "1",
        OTEL_EXPORTER_OTLP_COMPRESSION: "zstd",
        LOG_LEVEL: "verbose",
        LOG_FORMAT: "xml",
      });
      expect.fail("expected a SettingsError");
    } catch (err) {
      expect(err).to.be.instanceOf(SettingsError);
      const problems = (err as SettingsError).problems.join("\n");
      for (const text of [
        'TRACING_ENABLED="maybe": expected a boolean',
        'TRACING_EXPORTER_PROTOCOL="zipkin": expected one of http, grpc',
        'TRACING_SAMPLING_RATE="1.5": expected a number from 0 to 1',
        'OTEL_EXPORTER_OTLP_ENDPOINT="collector:4318": expected a URL',
        'OTEL_EXPORTER_OTLP_TRACES_HEADERS: item "api-key" is not of the form <key>=<value>',
        'OTEL_EXPORTER_OTLP_PROTOCOL="thrift": expected one of grpc, http/protobuf, http/json',
        'OTEL_EXPORTER_OTLP_TIMEOUT="10s": expected an integer',
        'OTEL_EXPORTER_OTLP_INSECURE="1": expected true or false',
        'OTEL_EXPORTER_OTLP_COMPRESSION="zstd": expected gzip or none',
        'LOG_LEVEL="verbose": expected one of',
        'LOG_FORMAT="xml": expected one of text, json',
      ]) {
        expect(problems).to.include(text);
      }
    }
  });
});

describe("ratelimit LOG_LEVEL", function () {
  this.timeout(30_000);

  it("shows debug lines at debug and hides info lines at warn", async () => {
    const runtime = new RuntimeDir({ "trace.yaml": CONFIG });
    const debug = await RateLimitProcess.start({ runtime, backend: "memory", env: { LOG_LEVEL: "debug" } });
    const warn = await RateLimitProcess.start({ runtime, backend: "memory", env: { LOG_LEVEL: "warning" } });
    try {
      for (const p of [debug, warn]) await p.call("", [[["a", "x"]]]).catch(() => {});
      await debug.until("the debug line", async () => debug.output.includes('"level":"debug"'));
      expect(debug.output).to.include('"@message":"ShouldRateLimit failed"');
      expect(debug.output).to.include('"level":"info"');
      const levels = warn.output
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => (JSON.parse(l) as { level: string }).level);
      expect(levels).to.include("warn");
      expect(levels.filter((l) => l === "info" || l === "debug")).to.deep.equal([]);
    } finally {
      await Promise.all([debug.stop(), warn.stop()]);
      runtime.cleanup();
    }
  });
});
