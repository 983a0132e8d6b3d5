// Responses: error texts, RateLimit-* headers, per-rule and global shadow mode,
// quota mode, the proto3 JSON endpoint with its status codes, /healthcheck, the
// gRPC health service and server reflection (through the real grpcurl).

import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { expect } from "chai";
import { protoPath as healthProtoPath } from "grpc-health-check";
import { fromRoot } from "../../common/paths.js";
import { RateLimitResponse_Code as Code } from "../../proto/gen/envoy/service/ratelimit/v3/rls.js";
import { createServiceLogger } from "../../ratelimit/log.js";
import { startService } from "../../ratelimit/runner.js";
import { loadSettings } from "../../ratelimit/settings/environment.js";
import { type DescriptorSpec, RateLimitProcess, RuntimeDir, uniq } from "./harness.js";

const CONFIG = `domain: resp
descriptors:
  - {key: minute10, rate_limit: {unit: minute, requests_per_unit: 10}}
  - {key: hour5, rate_limit: {unit: hour, requests_per_unit: 5}}
  - {key: day100, rate_limit: {unit: day, requests_per_unit: 100}}
  - {key: block, rate_limit: {unit: hour, requests_per_unit: 0}}
  - {key: shadow, shadow_mode: true, rate_limit: {unit: hour, requests_per_unit: 1}}
  - {key: quota, quota_mode: true, rate_limit: {unit: hour, requests_per_unit: 1}}
  - {key: quota2, quota_mode: true, rate_limit: {unit: hour, requests_per_unit: 1}}
  - {key: free, rate_limit: {unlimited: true}}
`;

function grpcError(p: Promise<unknown>): Promise<grpc.ServiceError> {
  return p.then(
    () => {
      throw new Error("expected the call to fail");
    },
    (err: grpc.ServiceError) => err,
  );
}

const execFileAsync = promisify(execFile);
const GRPCURL = fromRoot(".tools", "bin", "grpcurl");

/** Runs `grpcurl -plaintext ARGS` (SETUP_TESTS=1 scripts/setup.sh installs it) and answers its stdout. */
async function grpcurl(...args: string[]): Promise<string> {
  if (!existsSync(GRPCURL))
    throw new Error(`${GRPCURL} is missing: run SETUP_TESTS=1 bash scripts/setup.sh (it installs grpcurl)`);
  const { stdout } = await execFileAsync(GRPCURL, ["-plaintext", ...args], { timeout: 20_000 });
  return stdout;
}

describe("ratelimit responses", function () {
  this.timeout(60_000);
  let runtime: RuntimeDir;
  let svc: RateLimitProcess;
  let shadowSvc: RateLimitProcess;

  before(async () => {
    runtime = new RuntimeDir({ "resp.yaml": CONFIG });
    [svc, shadowSvc] = await Promise.all([
      RateLimitProcess.start({ runtime, env: { LIMIT_RESPONSE_HEADERS_ENABLED: "true" } }),
      RateLimitProcess.start({
        runtime,
        env: {
          SHADOW_MODE: "true",
          LIMIT_RESPONSE_HEADERS_ENABLED: "true",
          LIMIT_LIMIT_HEADER: "A-Ratelimit-Limit",
          LIMIT_REMAINING_HEADER: "A-Ratelimit-Remaining",
          LIMIT_RESET_HEADER: "A-Ratelimit-Reset",
        },
      }),
    ]);
  });
  after(async () => {
    await Promise.all([svc?.stop(), shadowSvc?.stop()]);
    runtime?.cleanup();
  });

  it("refuses an empty domain and an empty descriptor list with the reference's texts, counted as service_error", async () => {
    const e1 = await grpcError(svc.call("", [[["minute10", "x"]]]));
    expect([e1.code, e1.details]).to.deep.equal([grpc.status.UNKNOWN, "rate limit domain must not be empty"]);
    const e2 = await grpcError(svc.call("resp", []));
    expect([e2.code, e2.details]).to.deep.equal([
      grpc.status.UNKNOWN,
      "rate limit descriptor list must not be empty",
    ]);
    expect(await svc.stat("ratelimit.service.call.should_rate_limit.service_error")).to.equal(2);
  });

  it("counts total_requests and response_time of ShouldRateLimit", async () => {
    const before = await svc.stat("ratelimit_server.ShouldRateLimit.total_requests");
    await svc.call("resp", [[["day100", uniq()]]]);
    const stats = await svc.stats();
    expect(stats.get("ratelimit_server.ShouldRateLimit.total_requests")).to.equal(before + 1);
    expect(stats.get("ratelimit_server.ShouldRateLimit.response_time.count")).to.be.at.least(1);
  });

  it("adds RateLimit-Limit/Remaining/Reset of the most restrictive descriptor", async () => {
    const v = uniq();
    const res = await svc.call("resp", [[["day100", v]], [["hour5", v]], [["nolimit", v]]]);
    const reset = Number(res.statuses[1]!.durationUntilReset!.seconds);
    expect(res.responseHeadersToAdd.map((h) => [h.key, h.value])).to.deep.equal([
      ["RateLimit-Limit", "5"],
      ["RateLimit-Remaining", "4"],
      ["RateLimit-Reset", String(reset)],
    ]);
    const nowSec = Math.floor(Date.now() / 1000);
    expect(reset).to.be.within(3600 - (nowSec % 3600) - 1, 3600 - (nowSec % 3600) + 1);
  });

  it("an over-limit descriptor wins the headers; none are added without any limit", async () => {
    const v = uniq();
    const res = await svc.call("resp", [[["minute10", v]], [["block", v]]]);
    expect(res.overallCode).to.equal(Code.OVER_LIMIT);
    expect(res.responseHeadersToAdd.map((h) => [h.key, h.value]).slice(0, 2)).to.deep.equal([
      ["RateLimit-Limit", "0"],
      ["RateLimit-Remaining", "0"],
    ]);
    const none = await svc.call("resp", [[["nolimit", v]], [["free", v]]]);
    expect(none.responseHeadersToAdd).to.deep.equal([]);
  });

  it("per-rule shadow_mode answers OK while counting over_limit and shadow_mode", async () => {
    const v = uniq();
    const codes: [Code, Code][] = [];
    for (let i = 0; i < 3; i++) {
      const res = await svc.call("resp", [[["shadow", v]]]);
      codes.push([res.overallCode, res.statuses[0]!.code]);
    }
    expect(codes).to.deep.equal([
      [Code.OK, Code.OK],
      [Code.OK, Code.OK],
      [Code.OK, Code.OK],
    ]);
    const stats = await svc.stats();
    expect(stats.get("ratelimit.service.rate_limit.resp.shadow.over_limit")).to.equal(2);
    expect(stats.get("ratelimit.service.rate_limit.resp.shadow.shadow_mode")).to.equal(2);
    // Another rule over its limit still makes the request OVER_LIMIT.
    const mixed = await svc.call("resp", [[["shadow", v]], [["block", v]]]);
    expect(mixed.overallCode).to.equal(Code.OVER_LIMIT);
  });

  it("global SHADOW_MODE turns the overall code to OK, keeps per-descriptor statuses and counts global_shadow_mode", async () => {
    const v = uniq();
    const res = await shadowSvc.call("resp", [[["block", v]], [["day100", v]]]);
    expect(res.overallCode).to.equal(Code.OK);
    expect(res.statuses.map((s) => s.code)).to.deep.equal([Code.OVER_LIMIT, Code.OK]);
    expect(await shadowSvc.stat("ratelimit.service.global_shadow_mode")).to.equal(1);
    expect(res.responseHeadersToAdd.map((h) => [h.key, h.value]).slice(0, 2)).to.deep.equal([
      ["A-Ratelimit-Limit", "0"],
      ["A-Ratelimit-Remaining", "0"],
    ]);
    const json = await shadowSvc.json({
      domain: "resp",
      descriptors: [{ entries: [{ key: "block", value: v }] }],
    });
    expect(json.status).to.equal(200);
  });

  it("quota mode: OVER_LIMIT only when every quota descriptor is over", async () => {
    const v = uniq();
    await svc.call("resp", [[["quota", v]]]);
    const some = await svc.call("resp", [[["quota", v]], [["quota2", v]]]);
    expect(some.statuses.map((s) => s.code)).to.deep.equal([Code.OVER_LIMIT, Code.OK]);
    expect(some.overallCode).to.equal(Code.OK);
    const all = await svc.call("resp", [[["quota", v]], [["quota2", v]]]);
    expect(all.overallCode).to.equal(Code.OVER_LIMIT);
  });

  it("POST /json answers 200 with the proto3 JSON response, then 429 over the limit", async () => {
    const v = uniq();
    const body = { domain: "resp", descriptors: [{ entries: [{ key: "hour5", value: v }] }] };
    const ok = await svc.json(body);
    expect(ok.status).to.equal(200);
    const j = ok.json() as { overallCode: string; statuses: Record<string, unknown>[] };
    expect(j.overallCode).to.equal("OK");
    expect(j.statuses[0]).to.deep.include({
      code: "OK",
      currentLimit: { requestsPerUnit: 5, unit: "HOUR" },
      limitRemaining: 4,
    });
    expect(j.statuses[0]!.durationUntilReset).to.match(/^\d+s$/);
    for (let i = 0; i < 4; i++) await svc.json(body);
    const over = await svc.json(body);
    expect(over.status).to.equal(429);
    const oj = over.json() as { overallCode: string; statuses: Record<string, unknown>[] };
    expect(oj.overallCode).to.equal("OVER_LIMIT");
    expect(oj.statuses[0]).to.not.have.property("limitRemaining");
  });

  it("POST /json accepts snake_case names and hits_addend, and unlimited answers with the largest remaining", async () => {
    const v = uniq();
    const res = await svc.json({
      domain: "resp",
      hits_addend: 2,
      descriptors: [
        { entries: [{ key: "hour5", value: v }] },
        { entries: [{ key: "free", value: v }], hitsAddend: "1" },
      ],
    });
    const j = res.json() as { statuses: Record<string, unknown>[] };
    expect(j.statuses[0]!.limitRemaining).to.equal(3);
    expect(j.statuses[1]).to.deep.equal({ code: "OK", limitRemaining: 4294967295 });
  });

  it("POST /json answers 400 with the reason for malformed input", async () => {
    const cases: [unknown, string][] = [
      ["{not json", "invalid JSON"],
      [[1, 2], "request: expected an object"],
      [{ domain: 5 }, "domain: expected a string"],
      [{ domain: "resp", descriptors: {} }, "descriptors: expected a list"],
      [{ domain: "resp", descriptors: [{ entries: [{ key: "k", valeu: "v" }] }] }, 'unknown field "valeu"'],
      [{ domain: "resp", descriptors: [{ entries: [], hitsAddend: -1 }] }, "descriptors[0].hitsAddend"],
      [
        { domain: "", descriptors: [{ entries: [{ key: "k", value: "v" }] }] },
        "rate limit domain must not be empty",
      ],
      [{ domain: "resp", descriptors: [] }, "rate limit descriptor list must not be empty"],
    ];
    for (const [body, reason] of cases) {
      const res = await svc.json(body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
      const error = (res.json() as { error: { status: number; message: string } }).error;
      expect(error.status, JSON.stringify(body)).to.equal(400);
      expect(error.message, JSON.stringify(body)).to.include(reason);
    }
    // The reference decides whatever the method: a GET without a body is a 400, with one it is decided.
    const get = await fetch(`${svc.httpUrl}/json`);
    expect(get.status).to.equal(400);
    expect(((await get.json()) as { error: { message: string } }).error.message).to.include(
      "empty request body",
    );
  });

  it("/json decides a request sent with another method, as the reference does", async () => {
    const body = JSON.stringify({
      domain: "resp",
      descriptors: [{ entries: [{ key: "hour5", value: uniq() }] }],
    });
    const put = await fetch(`${svc.httpUrl}/json`, {
      method: "PUT",
      body,
      headers: { "content-type": "application/json" },
    });
    expect(put.status).to.equal(200);
    expect(((await put.json()) as { overallCode: string }).overallCode).to.equal("OK");
  });

  it("GET /healthcheck answers 200 OK", async () => {
    const res = await fetch(`${svc.httpUrl}/healthcheck`);
    expect([res.status, await res.text()]).to.deep.equal([200, "OK"]);
  });

  it("serves the gRPC health service under the name ratelimit", async () => {
    const health = healthClient(svc.grpcAddress);
    try {
      expect(await health.check("ratelimit")).to.equal("SERVING");
      expect(await health.check("")).to.equal("SERVING");
    } finally {
      health.close();
    }
  });

  // grpcurl knows nothing of these services but what reflection tells it.
  describe("gRPC server reflection, through grpcurl", () => {
    it("lists the rate limit and health services", async () => {
      const out = await grpcurl(svc.grpcAddress, "list");
      expect(out.trim().split("\n")).to.deep.equal([
        "envoy.service.ratelimit.v3.RateLimitService",
        "grpc.health.v1.Health",
      ]);
    });

    it("describes ShouldRateLimit and the request's types from the imported files", async () => {
      expect(
        await grpcurl(svc.grpcAddress, "describe", "envoy.service.ratelimit.v3.RateLimitService"),
      ).to.include(
        "rpc ShouldRateLimit ( .envoy.service.ratelimit.v3.RateLimitRequest ) returns ( .envoy.service.ratelimit.v3.RateLimitResponse );",
      );
      expect(
        await grpcurl(svc.grpcAddress, "describe", "envoy.service.ratelimit.v3.RateLimitRequest"),
      ).to.include("repeated .envoy.extensions.common.ratelimit.v3.RateLimitDescriptor descriptors = 2;");
      const descriptor = await grpcurl(
        svc.grpcAddress,
        "describe",
        "envoy.extensions.common.ratelimit.v3.RateLimitDescriptor",
      );
      expect(descriptor).to.include("message RateLimitDescriptor {");
      expect(descriptor).to.include(
        "repeated .envoy.extensions.common.ratelimit.v3.RateLimitDescriptor.Entry entries = 1;",
      );
    });

    it("calls ShouldRateLimit from JSON", async () => {
      const v = uniq();
      const request = {
        domain: "resp",
        descriptors: [{ entries: [{ key: "hour5", value: v }] }, { entries: [{ key: "block", value: v }] }],
      };
      const out = await grpcurl(
        "-d",
        JSON.stringify(request),
        svc.grpcAddress,
        "envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit",
      );
      const res = JSON.parse(out) as { overallCode: string; statuses: Record<string, unknown>[] };
      expect(res.overallCode).to.equal("OVER_LIMIT");
      expect(res.statuses.map((s) => s.code)).to.deep.equal(["OK", "OVER_LIMIT"]);
      expect(res.statuses[0]).to.deep.include({
        currentLimit: { requestsPerUnit: 5, unit: "HOUR" },
        limitRemaining: 4,
      });
    });

    it("calls the health service's Check", async () => {
      const out = await grpcurl(
        "-d",
        '{"service":"ratelimit"}',
        svc.grpcAddress,
        "grpc.health.v1.Health/Check",
      );
      expect(JSON.parse(out)).to.deep.equal({ status: "SERVING" });
    });
  });
});

describe("ratelimit health and shutdown (in-process)", function () {
  this.timeout(30_000);

  it("turns unhealthy on termination, over HTTP and gRPC health, and stops its listeners", async () => {
    const runtime = new RuntimeDir({ "resp.yaml": CONFIG });
    const settings = loadSettings({
      BACKEND_TYPE: "memory",
      RUNTIME_ROOT: runtime.root,
      RUNTIME_WATCH_ROOT: "false",
      PORT: "0",
      HOST: "127.0.0.1",
      GRPC_PORT: "0",
      GRPC_HOST: "127.0.0.1",
      DEBUG_PORT: "0",
      DEBUG_HOST: "127.0.0.1",
      LOG_LEVEL: "error",
    });
    const running = await startService(settings, createServiceLogger(settings));
    try {
      const states: boolean[] = [];
      running.health.onChange((ok) => states.push(ok));
      expect(running.health.healthy()).to.equal(true);
      const stopped = running.stop(2000);
      expect(running.health.problems()).to.deep.equal(["sigterm: shutting down"]);
      expect(states).to.deep.equal([true, false]);
      await stopped;
      const refused = await fetch(`http://127.0.0.1:${running.http.port}/healthcheck`).then(
        () => false,
        () => true,
      );
      expect(refused).to.equal(true);
    } finally {
      await running.stop();
      runtime.cleanup();
    }
  });

  it("RESPONSE_DYNAMIC_METADATA describes the request and merges the metadata of the rules that passed", async () => {
    const rules = `domain: meta
descriptors:
  - key: team
    rate_limit: {unit: hour, requests_per_unit: 100}
    metadata: {owner: payments, tier: {name: gold, limits: [1, 2]}}
  - key: route
    rate_limit: {unit: hour, requests_per_unit: 100}
    metadata: {owner: routing, tier: {region: eu}, route_only: true}
  - key: blocked
    rate_limit: {unit: hour, requests_per_unit: 0}
    metadata: {blocked_rule: yes}
  - {key: plain, rate_limit: {unit: hour, requests_per_unit: 100}}
`;
    const runtime = new RuntimeDir({ "meta.yaml": rules });
    const on = await RateLimitProcess.start({
      runtime,
      backend: "memory",
      env: { RESPONSE_DYNAMIC_METADATA: "true" },
    });
    const off = await RateLimitProcess.start({ runtime, backend: "memory" });
    try {
      const descriptors: DescriptorSpec[] = [
        [["team", "a"]],
        { entries: [["route", "r1"]] as [string, string][], hitsAddend: 2n },
        [["blocked", "x"]],
        [["plain", "p"]],
      ];
      const res = await on.call("meta", descriptors, 3);
      expect(res.overallCode).to.equal(Code.OVER_LIMIT);
      expect(res.dynamicMetadata).to.deep.equal({
        domain: "meta",
        descriptors: [
          { entries: ["team=a"] },
          { entries: ["route=r1"], hitsAddend: 2 },
          { entries: ["blocked=x"] },
          { entries: ["plain=p"] },
        ],
        hitsAddend: 3,
        // The first rule wins a key both set; maps merge; the over-limit rule's metadata is left out.
        metadata: {
          owner: "payments",
          tier: { name: "gold", limits: [1, 2], region: "eu" },
          route_only: true,
        },
      });
      const json = await on.json({
        domain: "meta",
        descriptors: [{ entries: [{ key: "plain", value: "q" }] }],
      });
      expect(json.json().dynamicMetadata).to.deep.equal({
        domain: "meta",
        descriptors: [{ entries: ["plain=q"] }],
      });
      expect((await off.call("meta", [[["team", "a"]]])).dynamicMetadata).to.equal(undefined);
    } finally {
      await Promise.all([on.stop(), off.stop()]);
      runtime.cleanup();
    }
  });

  it("with HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED, /healthcheck fails until a domain is loaded", async () => {
    const runtime = new RuntimeDir({});
    const svc = await RateLimitProcess.start({
      runtime,
      backend: "memory",
      env: { HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED: "true" },
    });
    const health = healthClient(svc.grpcAddress);
    try {
      const first = await fetch(`${svc.httpUrl}/healthcheck`);
      expect(first.status).to.equal(500);
      expect(await first.text()).to.include("config: no rate limit domain loaded");
      // gRPC: only the service name fails; "" (what grpc_health_probe asks by default) is
      // the server itself and stays SERVING, as with the reference.
      expect(await health.check("ratelimit")).to.equal("NOT_SERVING");
      expect(await health.check("")).to.equal("SERVING");
      expect(await health.list()).to.deep.equal({ "": "SERVING", ratelimit: "NOT_SERVING" });
      const unknown = await grpcError(health.check("nope"));
      expect([unknown.code, unknown.details]).to.deep.equal([
        grpc.status.NOT_FOUND,
        'unknown service "nope"',
      ]);
      const watched = health.watch("ratelimit");
      const watchedServer = health.watch("");
      const watchedUnknown = health.watch("nope");
      await svc.until("the watch's first answer", async () => watched.statuses.length === 1);
      runtime.write("resp.yaml", CONFIG);
      await svc.until(
        "healthy after the config appears",
        async () => (await fetch(`${svc.httpUrl}/healthcheck`)).status === 200,
      );
      expect(await health.check("ratelimit")).to.equal("SERVING");
      await svc.until("the watch hears of it", async () => watched.statuses.length === 2);
      // A change is sent once; "" was set again to the SERVING it had, which is not a change.
      await new Promise((r) => setTimeout(r, 300));
      expect(watched.statuses).to.deep.equal(["NOT_SERVING", "SERVING"]);
      expect(watchedServer.statuses).to.deep.equal(["SERVING"]);
      expect(watchedUnknown.statuses).to.deep.equal(["SERVICE_UNKNOWN"]);
      for (const w of [watched, watchedServer, watchedUnknown]) w.cancel();
    } finally {
      health.close();
      await svc.stop();
      runtime.cleanup();
    }
  });

  it("exits 0 on SIGTERM", async () => {
    const runtime = new RuntimeDir({ "resp.yaml": CONFIG });
    const svc = await RateLimitProcess.start({ runtime, backend: "memory" });
    try {
      expect(await svc.stop("SIGTERM")).to.equal(0);
      expect(svc.output).to.include("shutting down");
    } finally {
      runtime.cleanup();
    }
  });
});

/** A client of the standard gRPC health service (from the canonical health.proto); statuses by name. */
function healthClient(address: string): {
  check(service: string): Promise<string>;
  list(): Promise<Record<string, string>>;
  /** Collects a Watch's statuses until `cancel`. */
  watch(service: string): { statuses: string[]; cancel(): void };
  close(): void;
} {
  const def = protoLoader.loadSync(path.basename(healthProtoPath), {
    includeDirs: [path.dirname(healthProtoPath)],
    enums: String,
  });
  const pkg = grpc.loadPackageDefinition(def) as unknown as {
    grpc: { health: { v1: { Health: new (a: string, c: grpc.ChannelCredentials) => grpc.Client } } };
  };
  type Reply<T> = (err: grpc.ServiceError | null, res: T) => void;
  const client = new pkg.grpc.health.v1.Health(address, grpc.credentials.createInsecure()) as grpc.Client & {
    check: (req: { service: string }, cb: Reply<{ status: string }>) => void;
    list: (req: object, cb: Reply<{ statuses: Record<string, { status: string }> }>) => void;
    watch: (req: { service: string }) => grpc.ClientReadableStream<{ status: string }>;
  };
  return {
    check: (service) =>
      new Promise<string>((resolve, reject) =>
        client.check({ service }, (err, res) => (err ? reject(err) : resolve(res.status))),
      ),
    list: () =>
      new Promise((resolve, reject) =>
        client.list({}, (err, res) =>
          err
            ? reject(err)
            : resolve(Object.fromEntries(Object.entries(res.statuses).map(([k, v]) => [k, v.status]))),
        ),
      ),
    watch: (service) => {
      const statuses: string[] = [];
      const stream = client.watch({ service });
      stream.on("data", (m: { status: string }) => statuses.push(m.status));
      stream.on("error", () => {}); // CANCELLED when the test cancels
      return { statuses, cancel: () => stream.cancel() };
    },
    close: () => client.close(),
  };
}
