// The `ratelimit-client` command, the unix-socket listener (GRPC_UDS), and the
// settings read from the environment (names, defaults, and errors for bad values).

import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { VERSION } from "../../common/version.js";
import { RateLimitResponse_Code as Code } from "../../proto/gen/envoy/service/ratelimit/v3/rls.js";
import { startupDelay } from "../../ratelimit/redis/client.js";
import { loadSettings, SettingsError, settingNames } from "../../ratelimit/settings/environment.js";
import { runCommand } from "../support/process.js";
import { RateLimitProcess, RuntimeDir, uniq } from "./harness.js";

/** The test's source folder (the fixture is not copied into dist/). */
const SOURCE_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../test/ratelimit");

const CONFIG = `domain: cli
descriptors:
  - {key: a, rate_limit: {unit: hour, requests_per_unit: 2}}
  - key: outer
    value: o
    descriptors:
      - {key: inner, rate_limit: {unit: day, requests_per_unit: 7}}
`;

describe("ratelimit-client command", function () {
  this.timeout(60_000);
  let runtime: RuntimeDir;
  let svc: RateLimitProcess;

  before(async () => {
    runtime = new RuntimeDir({ "cli.yaml": CONFIG });
    svc = await RateLimitProcess.start({ runtime });
  });
  after(async () => {
    await svc?.stop();
    runtime?.cleanup();
  });

  it("sends repeatable -descriptors with comma-separated pairs and prints the response", async () => {
    const v = uniq();
    const out = await runCommand("ratelimit-client", [
      "-dial_string",
      svc.grpcAddress,
      "-domain",
      "cli",
      "-descriptors",
      `a=${v}`,
      `-descriptors=outer=o,inner=${v}`,
    ]);
    expect(out.code, out.stderr).to.equal(0);
    expect(out.stdout).to.include("domain: cli");
    expect(out.stdout).to.include(`descriptors: [a=${v}] [outer=o, inner=${v}]`);
    const response = JSON.parse(out.stdout.slice(out.stdout.indexOf("response: ") + 10)) as {
      overallCode: string;
      statuses: { limitRemaining: number; currentLimit: { unit: string } }[];
    };
    expect(response.overallCode).to.equal("OK");
    expect(response.statuses.map((s) => [s.limitRemaining, s.currentLimit.unit])).to.deep.equal([
      [1, "HOUR"],
      [6, "DAY"],
    ]);
    const again = await runCommand("ratelimit-client", [
      "-dial_string",
      svc.grpcAddress,
      "-domain",
      "cli",
      "-descriptors",
      `a=${v}`,
    ]);
    const third = await runCommand("ratelimit-client", [
      "-dial_string",
      svc.grpcAddress,
      "-domain",
      "cli",
      "-descriptors",
      `a=${v}`,
    ]);
    expect(again.stdout).to.include('"overallCode": "OK"');
    expect(third.stdout).to.include('"overallCode": "OVER_LIMIT"');
  });

  it("prints the service's error and exits 1", async () => {
    const out = await runCommand("ratelimit-client", [
      "-dial_string",
      svc.grpcAddress,
      "-domain",
      "",
      "-descriptors",
      "a=b",
    ]);
    expect(out.code).to.equal(1);
    expect(out.stderr).to.include("UNKNOWN: rate limit domain must not be empty");
  });

  it("rejects bad flags with usage and exit code 2", async () => {
    const bad = await runCommand("ratelimit-client", ["-domain", "d", "-descriptors", "novalue"]);
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.include("expected name=value pairs");
    const unknown = await runCommand("ratelimit-client", ["-bogus", "x"]);
    expect(unknown.code).to.equal(2);
    expect(unknown.stderr).to.include("flag provided but not defined: -bogus");
    expect(unknown.stderr).to.include("-dial_string");
  });

  it("GRPC_UDS serves gRPC on a unix socket", async () => {
    const socket = path.join(runtime.base, "rl.sock");
    const uds = await RateLimitProcess.start({ runtime, backend: "memory", env: { GRPC_UDS: socket } });
    try {
      expect(uds.grpcAddress).to.equal(`unix:${socket}`);
      expect((await uds.call("cli", [[["a", uniq()]]])).overallCode).to.equal(Code.OK);
      const out = await runCommand("ratelimit-client", [
        "-dial_string",
        `unix:${socket}`,
        "-domain",
        "cli",
        "-descriptors",
        "a=x",
      ]);
      expect(out.code, out.stderr).to.equal(0);
    } finally {
      await uds.stop();
    }
  });
});

describe("ratelimit settings", () => {
  it("has the spec's defaults", () => {
    const s = loadSettings({});
    expect(s).to.deep.include({
      host: "0.0.0.0",
      port: 8080,
      grpcHost: "0.0.0.0",
      grpcPort: 8081,
      debugPort: 6070,
      configType: "FILE",
      runtimeRoot: "/srv/runtime_data/current",
      runtimeSubdirectory: "",
      runtimeAppDirectory: "config",
      runtimeIgnoreDotFiles: false,
      runtimeWatchRoot: true,
      mergeDomainConfig: false,
      shadowMode: false,
      cacheKeyPrefix: "",
      stopCacheKeyIncrementWhenOverlimit: false,
      localCacheSizeInBytes: 0,
      nearLimitRatio: 0.8,
      healthyWithAtLeastOneConfigLoaded: false,
      limitLimitHeader: "RateLimit-Limit",
      limitRemainingHeader: "RateLimit-Remaining",
      limitResetHeader: "RateLimit-Reset",
      backendType: "memory",
      statsFlushIntervalMs: 10_000,
    });
    expect(s.kvstore).to.deep.include({
      type: "single",
      poolSize: 10,
      timeoutMs: 10_000,
      poolOnEmptyBehavior: "CREATE",
      poolOnEmptyWaitMs: 1000,
      pipelineWindowMs: 0,
      healthCheckActiveConnection: false,
    });
    expect(loadSettings({ KVSTORE_URL: "127.0.0.1:6379" }).backendType).to.equal("redis");
  });

  it("reads Go-style booleans and durations", () => {
    const s = loadSettings({
      SHADOW_MODE: "1",
      KVSTORE_TIMEOUT: "1m30s",
      GRPC_MAX_CONNECTION_AGE: "5m",
      MERGE_DOMAIN_CONFIG: "T",
    });
    expect([s.shadowMode, s.kvstore.timeoutMs, s.grpcMaxConnectionAgeMs, s.mergeDomainConfig]).to.deep.equal([
      true,
      90_000,
      300_000,
      true,
    ]);
  });

  it("reports every bad value with its variable name", () => {
    try {
      loadSettings({
        SHADOW_MODE: "yes please",
        PORT: "http",
        NEAR_LIMIT_RATIO: "1.5",
        KVSTORE_TIMEOUT: "10 seconds",
        KVSTORE_POOL_ON_EMPTY_BEHAVIOR: "PANIC",
        BACKEND_TYPE: "redis",
      });
      expect.fail("expected a SettingsError");
    } catch (err) {
      expect(err).to.be.instanceOf(SettingsError);
      const problems = (err as SettingsError).problems.join("\n");
      for (const name of [
        "SHADOW_MODE",
        "PORT",
        "NEAR_LIMIT_RATIO",
        "KVSTORE_TIMEOUT",
        "KVSTORE_POOL_ON_EMPTY_BEHAVIOR",
        "KVSTORE_URL",
      ]) {
        expect(problems).to.include(name);
      }
    }
  });

  it("reads every variable the reference reads (its own names beside the spec's)", () => {
    const reference = readFileSync(path.join(SOURCE_DIR, "reference-settings.txt"), "utf8")
      .split("\n")
      .filter((l) => l && !l.startsWith("#"));
    expect(reference.length).to.be.greaterThan(100);
    const read = settingNames({ USE_DOG_STATSD_MOGRIFIERS: "TAG" });
    const missing = reference.filter((name) => !read.has(name));
    expect(missing).to.deep.equal([]);
    for (const part of ["PATTERN", "NAME", "TAGS"])
      expect(read.has(`DOG_STATSD_MOGRIFIER_TAG_${part}`)).to.equal(true);
  });

  it("REDIS_STARTUP_* (KVSTORE_STARTUP_*), RESPONSE_DYNAMIC_METADATA, and the deprecated PIPELINE_LIMIT", () => {
    expect(loadSettings({}).kvstore.startup).to.deep.equal({
      initialMs: 1000,
      maxMs: 30_000,
      maxElapsedMs: 0,
    });
    const s = loadSettings({
      REDIS_STARTUP_INITIAL_INTERVAL: "250ms",
      REDIS_STARTUP_MAX_INTERVAL: "2s",
      REDIS_STARTUP_MAX_ELAPSED_TIME: "1m",
      RESPONSE_DYNAMIC_METADATA: "true",
      REDIS_PIPELINE_LIMIT: "8",
    });
    expect(s.kvstore.startup).to.deep.equal({ initialMs: 250, maxMs: 2000, maxElapsedMs: 60_000 });
    expect(s.responseDynamicMetadata).to.equal(true);
    expect(loadSettings({}).responseDynamicMetadata).to.equal(false);
    expect(s.notices.join("\n")).to.include("REDIS_PIPELINE_LIMIT=8 has no effect");
    expect(() =>
      loadSettings({ KVSTORE_STARTUP_INITIAL_INTERVAL: "5s", KVSTORE_STARTUP_MAX_INTERVAL: "1s" }),
    ).to.throw(SettingsError, "KVSTORE_STARTUP_MAX_INTERVAL");
    expect(() => loadSettings({ REDIS_STARTUP_MAX_ELAPSED_TIME: "soon" })).to.throw(
      SettingsError,
      'REDIS_STARTUP_MAX_ELAPSED_TIME="soon"',
    );
  });

  it("the startup backoff doubles from the initial interval up to the maximum, with jitter", () => {
    const b = { initialMs: 100, maxMs: 1000, maxElapsedMs: 0 };
    for (let i = 0; i < 200; i++) {
      expect(startupDelay(b, 1)).to.equal(100);
      expect(startupDelay(b, 3)).to.be.within(100, 400);
      expect(startupDelay(b, 40)).to.be.within(100, 1000);
    }
    const high = Array.from({ length: 200 }, () => startupDelay(b, 10));
    expect(Math.max(...high)).to.be.greaterThan(800);
  });

  it("the command exits 2 and names the variable when a setting is bad", async () => {
    const out = await runCommand("ratelimit", [], { PORT: "nope" });
    expect(out.code).to.equal(2);
    expect(out.stderr).to.include('PORT="nope": expected an integer');
  });

  it("--help names variables the service reads, and neither it nor --version starts the service", async () => {
    const help = await runCommand("ratelimit", ["--help"], { PORT: "nope" });
    expect(help.code, help.stderr).to.equal(0);
    expect(help.stdout).to.match(/^Usage: ratelimit/);
    const named = help.stdout.match(/\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b|\b(?:HOST|PORT)\b/g) ?? [];
    expect(named).to.include.members(["RUNTIME_ROOT", "GRPC_PORT", "BACKEND_TYPE", "RATELIMIT_PROCESSES"]);
    const read = settingNames({ BACKEND_TYPE: "memcache", USE_PROMETHEUS: "true" });
    expect(named.filter((name) => !read.has(name))).to.deep.equal([]);
    const version = await runCommand("ratelimit", ["-v"], { PORT: "nope" });
    expect(version.code).to.equal(0);
    expect(version.stdout.trim()).to.equal(VERSION);
  });

  it("refuses any other argument, saying it is configured by environment variables", async () => {
    const out = await runCommand("ratelimit", ["--port", "9000"]);
    expect(out.code).to.equal(2);
    expect(out.stderr).to.include('unexpected argument "--port"');
    expect(out.stderr).to.include("environment variables");
  });
});

describe("ratelimit logs", function () {
  this.timeout(30_000);

  it("LOG_FORMAT=json writes one object a line with @message, @timestamp and level; the default is text", async () => {
    const runtime = new RuntimeDir({ "cli.yaml": CONFIG });
    const json = await RateLimitProcess.start({ runtime, backend: "memory" });
    const text = new RateLimitProcess({ runtime, backend: "memory", env: { LOG_FORMAT: "text" } });
    try {
      const line = json.output.split("\n").find((l) => l.includes("rate limit service started"))!;
      const o = JSON.parse(line) as Record<string, unknown>;
      expect(o).to.include({ "@message": "rate limit service started", level: "warn" });
      expect(String(o["@timestamp"])).to.match(/^\d{4}-\d\d-\d\dT/);
      await text.until("the text start line", async () =>
        / WARN rate limit service started grpc=/.test(text.output),
      );
    } finally {
      await Promise.all([json.stop(), text.stop()]);
      runtime.cleanup();
    }
  });
});
