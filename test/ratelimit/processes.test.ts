// RATELIMIT_PROCESSES: the service as several processes sharing its listeners, against
// real Redis. Calls over separate connections reach every process, limits are shared
// through Redis, the statistics outputs and /stats show the sum, the debug listener
// forwards to one process, a killed process is replaced without losing the totals,
// SIGTERM stops them all, and the settings that cannot work are refused at start.

import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import * as grpc from "@grpc/grpc-js";
import { expect } from "chai";
import { usableCores } from "../../common/usable-cores.js";
import {
  RateLimitResponse_Code,
  RateLimitServiceClient,
} from "../../proto/gen/envoy/service/ratelimit/v3/rls.js";
import {
  ownHeapFlags,
  SERVING_HEAP_GROWING_PERCENT,
  SERVING_SEMI_SPACE_MB,
  servingExecArgv,
} from "../../ratelimit/processes/heap-flags.js";
import { loadSettings, SettingsError } from "../../ratelimit/settings/environment.js";
import { childPids } from "../support/process.js";
import { callGrpc, parseExposition, pause, RateLimitProcess, RuntimeDir, request } from "./harness.js";

const RULES = `domain: procs
descriptors:
  - {key: user, rate_limit: {unit: hour, requests_per_unit: 6}}
  - {key: free, rate_limit: {unit: hour, requests_per_unit: 1000}}
`;

describe("ratelimit as several processes (RATELIMIT_PROCESSES)", function () {
  this.timeout(90_000);
  let runtime: RuntimeDir;
  let svc: RateLimitProcess;
  let pullUrl: string;

  /** One client per connection: grpc-js would otherwise share one connection between clients. */
  const clients = (n: number) =>
    Array.from(
      { length: n },
      () =>
        new RateLimitServiceClient(svc.grpcAddress, grpc.credentials.createInsecure(), {
          "grpc.use_local_subchannel_pool": 1,
        }),
    );

  before(async () => {
    runtime = new RuntimeDir({ "procs.yaml": RULES });
    svc = await RateLimitProcess.start({
      runtime,
      env: { RATELIMIT_PROCESSES: "2", USE_PULL_STATS: "true", PULL_STATS_ADDR: "127.0.0.1:0" },
    });
    const started = svc.output.split("\n").find((l) => l.includes("rate limit service started"))!;
    const o = JSON.parse(started) as { pullStats: string; processes: number };
    expect(o.processes).to.equal(2);
    pullUrl = `http://${o.pullStats}`;
  });

  after(async () => {
    expect(await svc.stop()).to.equal(0);
    runtime.cleanup();
  });

  it("runs its serving processes with the service's heap flags", () => {
    for (const pid of childPids(svc.child.pid!)) {
      const args = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
      expect(args).to.include(`--max-semi-space-size=${SERVING_SEMI_SPACE_MB}`);
      expect(args).to.include(`--heap-growing-percent=${SERVING_HEAP_GROWING_PERCENT}`);
    }
  });

  it("answers from both processes and shares each limit between them through Redis", async () => {
    expect(childPids(svc.child.pid!)).to.have.length(2);
    const conns = clients(8);
    try {
      // Six allowed per hour for user=u1, asked over eight connections spread over both processes.
      const answers = [];
      for (const c of conns) answers.push(await callGrpc(c, request("procs", [[["user", "u1"]]])));
      const codes = answers.map((a) => a.overallCode);
      expect(codes.filter((c) => c === RateLimitResponse_Code.OK)).to.have.length(6);
      expect(codes.filter((c) => c === RateLimitResponse_Code.OVER_LIMIT)).to.have.length(2);
      for (const c of conns) await callGrpc(c, request("procs", [[["free", "f"]]]));
    } finally {
      for (const c of conns) c.close();
    }
    const total = "ratelimit.service.rate_limit.procs.user.total_hits";
    const own = async (k: number) => {
      const text = await (await fetch(`${svc.debugUrl}/stats?process=${k}`)).text();
      const line = text.split("\n").find((l) => l.startsWith(`${total}: `));
      return line ? Number(line.slice(total.length + 2)) : 0;
    };
    const [one, two] = [await own(1), await own(2)];
    expect(one, "process 1 answered some calls").to.be.greaterThan(0);
    expect(two, "process 2 answered some calls").to.be.greaterThan(0);
    expect(one + two).to.equal(8);
    // The sums reach the primary within a relay interval (each process sends its own batches).
    await svc.until("the summed /stats", async () => {
      const stats = await svc.stats();
      return (
        stats.get(total) === 8 &&
        stats.get("ratelimit.service.rate_limit.procs.user.over_limit") === 2 &&
        stats.get("ratelimit.service.rate_limit.procs.free.total_hits") === 8
      );
    });
  });

  it("serves the sum in Prometheus format, timers included", async () => {
    await svc.until("the summed scrape", async () => {
      const values = parseExposition(await (await fetch(pullUrl)).text());
      return (
        values.get('ratelimit_service_rate_limit_total_hits{domain="procs",key1="user"}') === 8 &&
        values.get('ratelimit_service_response_time_seconds_count{grpc_method="ShouldRateLimit"}') === 16 &&
        values.get('ratelimit_service_total_requests{grpc_method="ShouldRateLimit"}') === 16
      );
    });
    // Each process loaded the rules once.
    const values = parseExposition(await (await fetch(pullUrl)).text());
    expect(values.get("ratelimit_service_config_load_success")).to.equal(2);
  });

  it("forwards /rlconfig and /debug/pprof/ to the process ?process= names, and refuses others", async () => {
    const index = await (await fetch(`${svc.debugUrl}/`)).text();
    expect(index).to.include("This service runs 2 processes");
    for (const k of [1, 2]) {
      const res = await fetch(`${svc.debugUrl}/rlconfig?process=${k}`);
      expect(res.status).to.equal(200);
      expect(await res.text()).to.include("procs.user: unit=HOUR requests_per_unit=6");
    }
    const profile = await fetch(`${svc.debugUrl}/debug/pprof/profile?seconds=1&process=2`);
    expect(profile.status).to.equal(200);
    expect((await profile.json()) as object).to.have.property("nodes");
    const bad = await fetch(`${svc.debugUrl}/stats?process=3`);
    expect(bad.status).to.equal(400);
    expect(await bad.text()).to.equal("process=3: expected a process number from 1 to 2\n");
  });

  it("reloads changed rules in every process", async () => {
    runtime.write(
      "procs.yaml",
      `${RULES}  - {key: added, rate_limit: {unit: minute, requests_per_unit: 3}}\n`,
    );
    for (const k of [1, 2]) {
      await svc.until(`process ${k} reloading`, async () =>
        (await (await fetch(`${svc.debugUrl}/rlconfig?process=${k}`)).text()).includes(
          "procs.added: unit=MINUTE requests_per_unit=3",
        ),
      );
    }
    // Each process counted its own load.
    await svc.until(
      "both reloads in the sum",
      async () => (await svc.stat("ratelimit.service.config_load_success")) === 4,
    );
  });

  it("replaces a process that dies, keeps serving and keeps the totals", async () => {
    const [victim] = childPids(svc.child.pid!) as [number, number];
    process.kill(victim, "SIGKILL");
    await svc.until("a replacement process", async () => {
      const now = childPids(svc.child.pid!);
      return now.length === 2 && !now.includes(victim);
    });
    await svc.until("the replacement serving", async () => svc.output.includes("a service process died"));
    const conns = clients(4);
    try {
      for (const c of conns) {
        const answer = await callGrpc(c, request("procs", [[["free", "f"]]]));
        expect(answer.overallCode).to.equal(RateLimitResponse_Code.OK);
      }
    } finally {
      for (const c of conns) c.close();
    }
    // 8 before the kill + 4 now: the primary's totals did not restart with the process.
    await svc.until(
      "the totals after the restart",
      async () => (await svc.stat("ratelimit.service.rate_limit.procs.free.total_hits")) === 12,
    );
    const health = await fetch(`${svc.httpUrl}/healthcheck`);
    expect(health.status).to.equal(200);
  });

  it("stops every process on SIGTERM with exit code 0", async () => {
    const other = await RateLimitProcess.start({ runtime, env: { RATELIMIT_PROCESSES: "2" } });
    const children = childPids(other.child.pid!);
    expect(children).to.have.length(2);
    expect(await other.stop("SIGTERM")).to.equal(0);
    await pause(100);
    for (const pid of children) expect(() => process.kill(pid, 0), `process ${pid} ended`).to.throw();
    expect(other.output).to.include("rate limit service stopped");
  });

  it("exits with the code of a process that cannot start, naming the cause", async () => {
    const cert = path.join(runtime.base, "not-a-cert.pem");
    writeFileSync(cert, "this is not PEM\n");
    const p = new RateLimitProcess({
      runtime,
      env: {
        RATELIMIT_PROCESSES: "2",
        GRPC_SERVER_USE_TLS: "true",
        GRPC_SERVER_TLS_CERT: cert,
        GRPC_SERVER_TLS_KEY: cert,
      },
    });
    const code = await new Promise<number | null>((resolve) => p.child.once("exit", resolve));
    expect(code).to.equal(2);
    expect(p.output).to.include("GRPC_SERVER_TLS_CERT");
    expect(p.output).to.include("a service process exited while starting");
  });
});

describe("ratelimit with RATELIMIT_PROCESSES unset", function () {
  this.timeout(60_000);

  it("serves with one process per usable core, and stops cleanly", async () => {
    const runtime = new RuntimeDir({ "procs.yaml": RULES });
    // The harness asks for one process; an empty value is unset.
    const svc = await RateLimitProcess.start({ runtime, env: { RATELIMIT_PROCESSES: "" } });
    try {
      const cores = usableCores();
      const started = svc.output.split("\n").find((l) => l.includes("rate limit service started"))!;
      const o = JSON.parse(started) as { processes?: number };
      // One core: the process serves by itself (no primary, no `processes` field).
      expect(o.processes ?? 1).to.equal(cores);
      expect(childPids(svc.child.pid!)).to.have.length(cores > 1 ? cores : 0);
      const res = await svc.call("procs", [[["free", "x"]]]);
      expect(res.statuses[0]!.limitRemaining).to.equal(999);
    } finally {
      expect(await svc.stop()).to.equal(0);
      runtime.cleanup();
    }
  });
});

describe("serving processes' heap flags", () => {
  const young = `--max-semi-space-size=${SERVING_SEMI_SPACE_MB}`;
  const old = `--heap-growing-percent=${SERVING_HEAP_GROWING_PERCENT}`;

  it("adds each heap flag the operator did not choose, on the command line or in NODE_OPTIONS", () => {
    expect(servingExecArgv([], "")).to.deep.equal([young, old]);
    expect(servingExecArgv(["--enable-source-maps"], "--trace-warnings")).to.deep.equal([
      "--enable-source-maps",
      young,
      old,
    ]);
    expect(servingExecArgv(["--max-semi-space-size=32"], "")).to.deep.equal([
      "--max-semi-space-size=32",
      old,
    ]);
    expect(servingExecArgv([], "--max_semi_space_size=2")).to.deep.equal([old]);
    expect(servingExecArgv(["--heap-growing-percent=0"], "")).to.deep.equal([
      "--heap-growing-percent=0",
      young,
    ]);
  });

  it("a process serving by itself sets the old-generation flag on itself unless its command line has one", () => {
    expect(ownHeapFlags([])).to.deep.equal([old]);
    expect(ownHeapFlags(["--max-semi-space-size=4"])).to.deep.equal([old]);
    expect(ownHeapFlags(["--heap_growing_percent=200"])).to.deep.equal([]);
  });
});

describe("RATELIMIT_PROCESSES settings", () => {
  const base = { RUNTIME_ROOT: "/tmp", KVSTORE_URL: "127.0.0.1:6379" };
  const problem = (env: Record<string, string>) => {
    try {
      loadSettings(env);
    } catch (err) {
      expect(err).to.be.instanceOf(SettingsError);
      return (err as Error).message;
    }
    return "";
  };

  it("defaults to one per usable core (auto), takes a count; in-memory counters default to 1", () => {
    expect(loadSettings(base).processes).to.equal(usableCores());
    expect(loadSettings({ ...base, RATELIMIT_PROCESSES: "auto" }).processes).to.equal(usableCores());
    expect(loadSettings({ ...base, RATELIMIT_PROCESSES: "3" }).processes).to.equal(3);
    expect(loadSettings({ RUNTIME_ROOT: "/tmp", BACKEND_TYPE: "memory" }).processes).to.equal(1);
  });

  it("refuses what is not a count from 1 to 64, and several processes with in-memory counters", () => {
    expect(problem({ ...base, RATELIMIT_PROCESSES: "two" })).to.include(
      'RATELIMIT_PROCESSES="two": expected an integer',
    );
    expect(problem({ ...base, RATELIMIT_PROCESSES: "0" })).to.include(
      "RATELIMIT_PROCESSES=0: expected an integer from 1 to 64",
    );
    expect(problem({ RUNTIME_ROOT: "/tmp", BACKEND_TYPE: "memory", RATELIMIT_PROCESSES: "2" })).to.include(
      "RATELIMIT_PROCESSES=2: BACKEND_TYPE=memory keeps the counters in each process",
    );
    expect(problem({ RUNTIME_ROOT: "/tmp", BACKEND_TYPE: "memory", RATELIMIT_PROCESSES: "1" })).to.equal("");
  });
});
