#!/usr/bin/env bash
# Regenerates proto/gen/ (committed) from the .proto sources in proto/: the ts-proto output
# and proto/gen/ratelimit-service.binpb, the descriptor set the rate limit service's gRPC
# server reflection answers from. Only needed after editing a .proto file; the normal
# setup never runs it.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v protoc >/dev/null 2>&1; then
  echo "gen-proto: protoc not found; installing Debian's protobuf-compiler" >&2
  if [ "$(id -u)" = 0 ]; then
    apt-get install -y protobuf-compiler >/dev/null || { apt-get update >/dev/null && apt-get install -y protobuf-compiler >/dev/null; }
  else
    sudo apt-get install -y protobuf-compiler >/dev/null
  fi
fi

# The well-known types (google/protobuf/*.proto) ship with protoc.
WKT_INCLUDE=""
for dir in /usr/include /usr/local/include; do
  if [ -f "$dir/google/protobuf/duration.proto" ]; then WKT_INCLUDE="$dir"; break; fi
done
if [ -z "$WKT_INCLUDE" ]; then
  echo "gen-proto: google/protobuf/duration.proto not found under /usr/include or /usr/local/include" >&2
  exit 1
fi

rm -rf proto/gen
mkdir -p proto/gen
# Our .proto sources: envoy/, ratelimit/ (the xDS configuration), grpc/health/ and
# google/rpc/ (the WKTs under google/protobuf come from protoc's include directory).
mapfile -t SOURCES < <(cd proto && find envoy ratelimit grpc google -name '*.proto' | sort)
echo "gen-proto: protoc $(protoc --version | cut -d' ' -f2) + ts-proto over ${#SOURCES[@]} files" >&2
(cd proto && protoc \
  --plugin=protoc-gen-ts_proto=../node_modules/.bin/protoc-gen-ts_proto \
  -I . -I "$WKT_INCLUDE" \
  --ts_proto_out=gen \
  --ts_proto_opt=outputServices=grpc-js,esModuleInterop=true,importSuffix=.js,forceLong=bigint,env=node,useDate=false,outputPartialMethods=false \
  "${SOURCES[@]}")
echo "gen-proto: wrote $(find proto/gen -name '*.ts' | wc -l) files under proto/gen" >&2

# The rate limit service's gRPC server reflection (ratelimit/server/reflection.ts) serves these
# descriptors: the rate limit service and the health service, each with everything it
# imports, as protoc compiles them. Descriptors rebuilt from a parsed .proto at run time
# (proto-loader/protobufjs) lack the imports and use shortened type names, which grpcurl,
# ghz and other clients of reflection cannot resolve.
(cd proto && protoc \
  -I . -I "$WKT_INCLUDE" \
  --include_imports --include_source_info \
  --descriptor_set_out=gen/ratelimit-service.binpb \
  envoy/service/ratelimit/v3/rls.proto grpc/health/v1/health.proto)
echo "gen-proto: wrote proto/gen/ratelimit-service.binpb ($(wc -c <proto/gen/ratelimit-service.binpb) bytes)" >&2
