// A minimal OpenTelemetry collector for the tests: OTLP/HTTP (`POST /v1/traces`,
// protobuf or JSON) and OTLP/gRPC (`TraceService/Export`) on free ports, decoding
// the spans it receives with a trimmed copy of the OTLP messages (otlp/trace-service.proto).

import http from "node:http";
import type { AddressInfo } from "node:net";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import protobuf from "protobufjs";
import { fromRoot } from "../../common/paths.js";

const PROTO = fromRoot("test/ratelimit/otlp/trace-service.proto");

type Value = string | number | boolean | undefined;

export interface ReceivedSpan {
  name: string;
  /** OTLP's SpanKind: 2 is SERVER. */
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  attributes: Record<string, Value>;
  /** OTLP's StatusCode: 0 unset, 1 ok, 2 error. */
  status: { code: number; message: string };
  events: string[];
  resource: Record<string, Value>;
}

export interface ReceivedExport {
  protocol: "http/protobuf" | "http/json" | "grpc";
  headers: Record<string, string>;
}

interface RawKeyValue {
  key: string;
  value?: { stringValue?: string; boolValue?: boolean; intValue?: number | string; doubleValue?: number };
}

interface RawSpan {
  name: string;
  kind?: number;
  traceId?: Uint8Array | string;
  spanId?: Uint8Array | string;
  parentSpanId?: Uint8Array | string;
  attributes?: RawKeyValue[];
  status?: { code?: number; message?: string };
  events?: { name?: string }[];
}

interface RawRequest {
  resourceSpans?: {
    resource?: { attributes?: RawKeyValue[] };
    scopeSpans?: { spans?: RawSpan[] }[];
  }[];
}

function attributes(list: RawKeyValue[] | undefined): Record<string, Value> {
  const out: Record<string, Value> = {};
  for (const { key, value } of list ?? []) {
    if (!value) out[key] = undefined;
    else if (value.stringValue !== undefined) out[key] = value.stringValue;
    else if (value.boolValue !== undefined) out[key] = value.boolValue;
    else if (value.intValue !== undefined) out[key] = Number(value.intValue);
    else out[key] = value.doubleValue;
  }
  return out;
}

/** Ids are bytes in protobuf and hex strings in OTLP/JSON. */
const hex = (id: Uint8Array | string | undefined): string =>
  typeof id === "string" ? id : id ? Buffer.from(id).toString("hex") : "";

export class OtlpCollector {
  readonly spans: ReceivedSpan[] = [];
  readonly exports: ReceivedExport[] = [];
  private readonly requestType = protobuf
    .loadSync(PROTO)
    .lookupType("opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest");
  private readonly httpServer: http.Server;
  private readonly grpcServer = new grpc.Server();
  httpEndpoint = "";
  grpcEndpoint = "";

  private constructor() {
    this.httpServer = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        if (req.method !== "POST" || req.url !== "/v1/traces") {
          res.writeHead(404).end();
          return;
        }
        const body = Buffer.concat(chunks);
        const json = String(req.headers["content-type"]).startsWith("application/json");
        const raw = json
          ? (JSON.parse(body.toString("utf8")) as RawRequest)
          : (this.requestType.toObject(this.requestType.decode(body), { longs: Number }) as RawRequest);
        this.record(raw, json ? "http/json" : "http/protobuf", req.headers as Record<string, string>);
        res.writeHead(200, { "content-type": json ? "application/json" : "application/x-protobuf" });
        res.end(json ? "{}" : "");
      });
    });
    const definition = protoLoader.loadSync(PROTO, { longs: Number, oneofs: true });
    const pkg = grpc.loadPackageDefinition(definition) as unknown as {
      opentelemetry: {
        proto: { collector: { trace: { v1: { TraceService: grpc.ServiceClientConstructor } } } };
      };
    };
    this.grpcServer.addService(pkg.opentelemetry.proto.collector.trace.v1.TraceService.service, {
      Export: (call: grpc.ServerUnaryCall<RawRequest, unknown>, callback: grpc.sendUnaryData<unknown>) => {
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(call.metadata.getMap())) headers[k] = String(v);
        this.record(call.request, "grpc", headers);
        callback(null, {});
      },
    });
  }

  private record(
    raw: RawRequest,
    protocol: ReceivedExport["protocol"],
    headers: Record<string, string>,
  ): void {
    this.exports.push({ protocol, headers });
    for (const rs of raw.resourceSpans ?? []) {
      const resource = attributes(rs.resource?.attributes);
      for (const ss of rs.scopeSpans ?? []) {
        for (const s of ss.spans ?? []) {
          this.spans.push({
            name: s.name,
            kind: s.kind ?? 0,
            traceId: hex(s.traceId),
            spanId: hex(s.spanId),
            parentSpanId: hex(s.parentSpanId),
            attributes: attributes(s.attributes),
            status: { code: s.status?.code ?? 0, message: s.status?.message ?? "" },
            events: (s.events ?? []).map((e) => e.name ?? ""),
            resource,
          });
        }
      }
    }
  }

  static async start(): Promise<OtlpCollector> {
    const c = new OtlpCollector();
    await new Promise<void>((resolve) => c.httpServer.listen(0, "127.0.0.1", resolve));
    c.httpEndpoint = `http://127.0.0.1:${(c.httpServer.address() as AddressInfo).port}`;
    const port = await new Promise<number>((resolve, reject) =>
      c.grpcServer.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, p) =>
        err ? reject(err) : resolve(p),
      ),
    );
    c.grpcEndpoint = `http://127.0.0.1:${port}`;
    return c;
  }

  async close(): Promise<void> {
    this.grpcServer.forceShutdown();
    await new Promise<void>((resolve) => {
      this.httpServer.close(() => resolve());
      this.httpServer.closeAllConnections();
    });
  }
}
