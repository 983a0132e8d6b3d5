// gRPC server reflection (v1 and v1alpha) for the gRPC listener, loaded on its first call.
// @grpc/reflection parses its own .proto files with protobufjs, and the descriptor set is
// read with @bufbuild/protobuf: loaded at start they held about 6 MB more in every serving
// process at 5 000 calls/s (docs/performance/ratelimit.md#memory-of-a-serving-process), for a
// service that grpcurl and ghz ask now and then. Until then the server knows the two
// methods by path only, passing messages through as bytes; the first call loads the real
// implementation, whose own codecs then decode and encode every message.

import { EventEmitter } from "node:events";
import { readFileSync } from "node:fs";
import * as grpc from "@grpc/grpc-js";
import type { Logger } from "../../common/logger.js";
import { fromRoot } from "../../common/paths.js";

/** What reflection lists (not the xDS services of proto/: this server does not serve them). */
const REFLECTED_SERVICES = ["envoy.service.ratelimit.v3.RateLimitService", "grpc.health.v1.Health"];

/**
 * protoc's descriptors of REFLECTED_SERVICES and everything they import, written by
 * scripts/gen-proto.sh. Not proto-loader's: protobufjs rebuilds the files under made-up names,
 * with relative type names and no dependency lists, which grpcurl and ghz cannot resolve
 * (grpc-node issue 3018).
 */
const DESCRIPTOR_SET_PATH = fromRoot("proto", "gen", "ratelimit-service.binpb");

const PATHS = [
  "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
  "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
] as const;

const asIs = (b: Buffer) => b;

/** A method of the loaded implementation: its codecs and its handler of a decoded stream. */
interface Loaded {
  decode(b: Buffer): unknown;
  encode(message: unknown): Buffer;
  handle(stream: grpc.ServerDuplexStream<unknown, unknown>): void;
}

/** Read at start, so a missing descriptor set is reported then, not at the first call. */
function readDescriptorSet(): Buffer {
  const set = readFileSync(DESCRIPTOR_SET_PATH);
  if (set.length === 0) throw new Error(`${DESCRIPTOR_SET_PATH} is empty`);
  return set;
}

async function loadImplementation(set: Buffer): Promise<Map<string, Loaded>> {
  const [
    { fromBinary, toBinary },
    { FileDescriptorProtoSchema, FileDescriptorSetSchema },
    { ReflectionService },
  ] = await Promise.all([
    import("@bufbuild/protobuf"),
    import("@bufbuild/protobuf/wkt"),
    import("@grpc/reflection"),
  ]);
  const files = fromBinary(FileDescriptorSetSchema, set).file;
  const described = new Set(files.flatMap((f) => f.service.map((s) => `${f.package}.${s.name}`)));
  const missing = REFLECTED_SERVICES.filter((name) => !described.has(name));
  if (missing.length > 0) throw new Error(`${DESCRIPTOR_SET_PATH} does not describe ${missing.join(", ")}`);
  // ReflectionService reads nothing of a package definition but its entries'
  // fileDescriptorProtos (and indexes every file by name): one entry carries the whole set.
  const pkg = {
    [DESCRIPTOR_SET_PATH]: {
      fileDescriptorProtos: files.map((f) => Buffer.from(toBinary(FileDescriptorProtoSchema, f))),
    },
  } as unknown as ConstructorParameters<typeof ReflectionService>[0];
  // Its addToServer is the only way to its methods: take them from a stand-in server.
  const methods = new Map<string, Loaded>();
  const collector = {
    addService(
      service: grpc.ServiceDefinition,
      impl: Record<string, grpc.handleBidiStreamingCall<unknown, unknown>>,
    ) {
      for (const [name, m] of Object.entries(service)) {
        methods.set(m.path, {
          decode: m.requestDeserialize,
          encode: m.responseSerialize,
          handle: impl[name]!,
        });
      }
    },
  };
  new ReflectionService(pkg, { services: REFLECTED_SERVICES }).addToServer(
    collector as unknown as grpc.Server,
  );
  return methods;
}

/**
 * The call as the loaded handler sees it: decoded messages in, messages out through its
 * codec. The handler uses `data`, `end`, `write` and `end()` only.
 */
function decodedStream(call: grpc.ServerDuplexStream<Buffer, Buffer>, method: Loaded) {
  const stream = new EventEmitter() as EventEmitter & { write(m: unknown): boolean; end(): void };
  stream.write = (message) => call.write(method.encode(message));
  stream.end = () => call.end();
  call.on("data", (b: Buffer) => {
    try {
      stream.emit("data", method.decode(b));
    } catch (err) {
      call.emit("error", {
        code: grpc.status.INVALID_ARGUMENT,
        details: `bad reflection request: ${(err as Error).message}`,
      });
    }
  });
  call.on("end", () => stream.emit("end"));
  return stream as unknown as grpc.ServerDuplexStream<unknown, unknown>;
}

/** Registers reflection on `server`; false (with a warning) when its descriptor set cannot be read. */
export function addLazyReflection(server: grpc.Server, logger: Logger): boolean {
  let set: Buffer;
  try {
    set = readDescriptorSet();
  } catch (err) {
    logger.warn(
      { err: (err as Error).message },
      "gRPC reflection disabled: cannot read the descriptor set proto/gen/ratelimit-service.binpb",
    );
    return false;
  }
  let loading: Promise<Map<string, Loaded>> | undefined;
  const handlerFor =
    (path: string): grpc.handleBidiStreamingCall<Buffer, Buffer> =>
    (call) => {
      loading ??= loadImplementation(set);
      loading.then(
        (methods) => {
          const loaded = methods.get(path)!;
          loaded.handle(decodedStream(call, loaded));
        },
        (err: Error) => {
          logger.warn({ err: err.message }, "gRPC reflection failed to load");
          call.emit("error", {
            code: grpc.status.UNAVAILABLE,
            details: `reflection unavailable: ${err.message}`,
          });
        },
      );
    };
  const method = (path: string) => ({
    path,
    requestStream: true,
    responseStream: true,
    requestSerialize: asIs,
    requestDeserialize: asIs,
    responseSerialize: asIs,
    responseDeserialize: asIs,
    originalName: "serverReflectionInfo",
  });
  const service: grpc.ServiceDefinition = Object.fromEntries(PATHS.map((path) => [path, method(path)]));
  server.addService(
    service,
    Object.fromEntries(PATHS.map((path) => [path, handlerFor(path)])) as grpc.UntypedServiceImplementation,
  );
  return true;
}
