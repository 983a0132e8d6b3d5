// The standard gRPC health service (grpc.health.v1.Health: Check, Watch, List) of the
// gRPC listener, on the ts-proto code generated from proto/grpc/health/v1/health.proto.
// Not grpc-health-check: that package parses its .proto with protobufjs when it is
// imported, and protobufjs's parser and reflection objects stayed in every serving
// process's heap (docs/performance/ratelimit.md#memory-of-a-serving-process).

import * as grpc from "@grpc/grpc-js";
import {
  type HealthCheckRequest,
  type HealthCheckResponse,
  type HealthListResponse,
  HealthService,
  HealthCheckResponse_ServingStatus as ServingStatus,
} from "../../proto/gen/grpc/health/v1/health.js";

export type HealthStatus = "SERVING" | "NOT_SERVING";

type Watcher = (status: ServingStatus) => void;

export class GrpcHealth {
  private readonly statuses = new Map<string, ServingStatus>();
  private readonly watchers = new Map<string, Set<Watcher>>();

  constructor(initial: Record<string, HealthStatus>) {
    for (const [service, status] of Object.entries(initial))
      this.statuses.set(service, ServingStatus[status]);
  }

  /** Sets one service's status; its watchers hear of it only when it changed. */
  setStatus(service: string, status: HealthStatus): void {
    const next = ServingStatus[status];
    if (this.statuses.get(service) === next) return;
    this.statuses.set(service, next);
    for (const watcher of this.watchers.get(service) ?? []) watcher(next);
  }

  addToServer(server: grpc.Server): void {
    server.addService(HealthService, {
      check: (
        call: grpc.ServerUnaryCall<HealthCheckRequest, HealthCheckResponse>,
        callback: grpc.sendUnaryData<HealthCheckResponse>,
      ) => {
        const status = this.statuses.get(call.request.service);
        if (status === undefined)
          callback({
            code: grpc.status.NOT_FOUND,
            details: `unknown service ${JSON.stringify(call.request.service)}`,
          });
        else callback(null, { status });
      },
      watch: (call: grpc.ServerWritableStream<HealthCheckRequest, HealthCheckResponse>) => {
        const { service } = call.request;
        const watcher: Watcher = (status) => call.write({ status });
        const set = this.watchers.get(service) ?? new Set<Watcher>();
        this.watchers.set(service, set);
        set.add(watcher);
        call.once("cancelled", () => {
          set.delete(watcher);
          if (set.size === 0 && this.watchers.get(service) === set) this.watchers.delete(service);
        });
        watcher(this.statuses.get(service) ?? ServingStatus.SERVICE_UNKNOWN);
      },
      list: (
        _call: grpc.ServerUnaryCall<unknown, HealthListResponse>,
        callback: grpc.sendUnaryData<HealthListResponse>,
      ) => {
        const statuses: HealthListResponse["statuses"] = {};
        for (const [service, status] of this.statuses) statuses[service] = { status };
        callback(null, { statuses });
      },
    });
  }
}
