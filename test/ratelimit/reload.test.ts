// Loading and reloading rules: in-place changes (RUNTIME_WATCH_ROOT=false), root
// symlink swaps (the default), a bad reload keeping the previous rules, a failed
// first load, MERGE_DOMAIN_CONFIG, RUNTIME_IGNOREDOTFILES and the directory settings.

import { mkdirSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import * as grpc from "@grpc/grpc-js";
import { expect } from "chai";
import { RateLimitResponse_Code as Code } from "../../proto/gen/envoy/service/ratelimit/v3/rls.js";
import { pause, RateLimitProcess, RuntimeDir, uniq } from "./harness.js";

const BASIC = `domain: reload
descriptors:
  - {key: key1, rate_limit: {unit: hour, requests_per_unit: 50}}
  - {key: block, rate_limit: {unit: hour, requests_per_unit: 0}}
`;

const limitOf = async (svc: RateLimitProcess, domain: string, key: string) =>
  (await svc.call(domain, [[[key, uniq()]]])).statuses[0]!.currentLimit?.requestsPerUnit;

describe("ratelimit reload", function () {
  this.timeout(60_000);
  const cleanup: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanup.splice(0).reverse()) await c();
  });
  const start = async (runtime: RuntimeDir, env: Record<string, string> = {}) => {
    const svc = await RateLimitProcess.start({ runtime, env, backend: "memory" });
    cleanup.push(() => svc.stop());
    return svc;
  };
  const newRuntime = (files: Record<string, string>) => {
    const r = new RuntimeDir(files);
    cleanup.push(() => r.cleanup());
    return r;
  };

  it("reloads every file when one is added, changed or removed (RUNTIME_WATCH_ROOT=false)", async () => {
    const runtime = newRuntime({
      "other.yaml":
        "domain: other\ndescriptors: [{key: k, rate_limit: {unit: hour, requests_per_unit: 3}}]\n",
    });
    const svc = await start(runtime, { RUNTIME_WATCH_ROOT: "false" });
    expect(await limitOf(svc, "reload", "block")).to.equal(undefined);
    const loads = await svc.stat("ratelimit.service.config_load_success");

    runtime.write("reload.yaml", BASIC);
    await svc.until("the new file to load", async () => (await limitOf(svc, "reload", "key1")) === 50);
    expect(await svc.stat("ratelimit.service.config_load_success")).to.be.greaterThan(loads);
    const s = (await svc.call("reload", [[["key1", "foo"]]])).statuses[0]!;
    expect([s.code, s.limitRemaining]).to.deep.equal([Code.OK, 49]);
    expect((await svc.call("reload", [[["block", "foo"]]])).overallCode).to.equal(Code.OVER_LIMIT);

    runtime.write("reload.yaml", BASIC.replace("50", "60"));
    await svc.until("the changed file to load", async () => (await limitOf(svc, "reload", "key1")) === 60);
    expect(await limitOf(svc, "other", "k")).to.equal(3);

    runtime.remove("reload.yaml");
    await svc.until(
      "the removal to unload the domain",
      async () => (await limitOf(svc, "reload", "key1")) === undefined,
    );
  });

  it("a bad reload keeps the previous rules and is counted as config_load_error", async () => {
    const runtime = newRuntime({ "reload.yaml": BASIC });
    const svc = await start(runtime, { RUNTIME_WATCH_ROOT: "false" });
    expect(await svc.stat("ratelimit.service.config_load_error")).to.equal(0);
    runtime.write(
      "bad.yaml",
      "domain: bad\ndescriptors:\n  - key: k\n    rate_limit: {unit: fortnight, requests_per_unit: 1}\n",
    );
    await svc.until(
      "the error to be counted",
      async () => (await svc.stat("ratelimit.service.config_load_error")) >= 1,
    );
    expect(await limitOf(svc, "reload", "key1")).to.equal(50);
    expect(svc.output).to.include(
      "Error loading new configuration: config.bad.yaml: invalid rate limit unit 'fortnight'",
    );
    // A duplicate domain in another file is a load error too.
    runtime.write("bad.yaml", BASIC);
    await svc.until(
      "the duplicate to be counted",
      async () => (await svc.stat("ratelimit.service.config_load_error")) >= 2,
    );
    expect(svc.output).to.include("duplicate domain 'reload' in config file");
    expect(await limitOf(svc, "reload", "key1")).to.equal(50);
  });

  it("a failed first load makes every call fail with a clear error until a good load", async () => {
    const runtime = newRuntime({ "reload.yaml": "domain: reload\ndescriptors: [{key: k, ratelimit: {}}]\n" });
    const svc = await start(runtime, { RUNTIME_WATCH_ROOT: "false" });
    const err = await svc.call("reload", [[["key1", "x"]]]).then(
      () => undefined,
      (e: grpc.ServiceError) => e,
    );
    expect([err?.code, err?.details]).to.deep.equal([
      grpc.status.UNKNOWN,
      "no rate limit configuration loaded",
    ]);
    const json = await svc.json({
      domain: "reload",
      descriptors: [{ entries: [{ key: "key1", value: "x" }] }],
    });
    expect([json.status, json.json()]).to.deep.equal([
      400,
      { error: { status: 400, message: "no rate limit configuration loaded" } },
    ]);
    expect(await svc.stat("ratelimit.service.config_load_error")).to.equal(1);
    runtime.write("reload.yaml", BASIC);
    await svc.until("the fixed file to load", async () => (await limitOf(svc, "reload", "key1")) === 50);
  });

  it("follows a swap of the root symlink (RUNTIME_WATCH_ROOT=true, the default)", async () => {
    const runtime = newRuntime({});
    const base = runtime.base;
    for (const [dir, limit] of [
      ["v1", 10],
      ["v2", 20],
    ] as const) {
      mkdirSync(path.join(base, dir, "config"), { recursive: true });
      writeFileSync(path.join(base, dir, "config", "r.yaml"), BASIC.replace("50", String(limit)));
    }
    const link = path.join(base, "live");
    symlinkSync(path.join(base, "v1"), link);
    const svc = await RateLimitProcess.start({
      runtime,
      backend: "memory",
      env: { RUNTIME_ROOT: link, RUNTIME_WATCH_ROOT: "true" },
    });
    cleanup.push(() => svc.stop());
    expect(await limitOf(svc, "reload", "key1")).to.equal(10);

    // An in-place edit is not a swap: with RUNTIME_WATCH_ROOT=true it is not picked up.
    writeFileSync(path.join(base, "v1", "config", "r.yaml"), BASIC.replace("50", "15"));
    await pause(500);
    expect(await limitOf(svc, "reload", "key1")).to.equal(10);

    // Atomic swap, as Kubernetes and deploy tools do it: a new link renamed over the old one.
    symlinkSync(path.join(base, "v2"), path.join(base, "live.tmp"));
    renameSync(path.join(base, "live.tmp"), link);
    await svc.until("the swap to load v2", async () => (await limitOf(svc, "reload", "key1")) === 20);
  });

  it("MERGE_DOMAIN_CONFIG joins files of one domain", async () => {
    const a = "domain: merged\ndescriptors: [{key: a, rate_limit: {unit: hour, requests_per_unit: 1}}]\n";
    const b = "domain: merged\ndescriptors: [{key: b, rate_limit: {unit: hour, requests_per_unit: 2}}]\n";
    const runtime = newRuntime({ "a.yaml": a, "b.yaml": b });
    const merged = await start(runtime, { MERGE_DOMAIN_CONFIG: "true" });
    expect([await limitOf(merged, "merged", "a"), await limitOf(merged, "merged", "b")]).to.deep.equal([
      1, 2,
    ]);
    const strict = await start(runtime);
    expect(await strict.stat("ratelimit.service.config_load_error")).to.equal(1);
    expect(strict.output).to.include("config.b.yaml: duplicate domain 'merged' in config file");
  });

  it("RUNTIME_IGNOREDOTFILES skips dot files and dot directories (the Kubernetes ..data copies)", async () => {
    const runtime = newRuntime({
      "reload.yaml": BASIC,
      "..2024_01/reload.yaml": BASIC,
      ".hidden.yaml": BASIC,
    });
    const ignoring = await start(runtime, { RUNTIME_IGNOREDOTFILES: "true" });
    expect(await limitOf(ignoring, "reload", "key1")).to.equal(50);
    const reading = await start(runtime);
    expect(await reading.stat("ratelimit.service.config_load_error")).to.equal(1);
  });

  it("reads RUNTIME_ROOT/RUNTIME_SUBDIRECTORY/RUNTIME_APPDIRECTORY, and only .yaml/.yml files", async () => {
    const runtime = newRuntime({});
    const dir = path.join(runtime.root, "ratelimit", "rules");
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, "r.yml"), BASIC);
    writeFileSync(path.join(dir, "README.txt"), "not: yaml: [");
    const svc = await start(runtime, { RUNTIME_SUBDIRECTORY: "ratelimit", RUNTIME_APPDIRECTORY: "rules" });
    expect(await limitOf(svc, "reload", "key1")).to.equal(50);
    const rl = await (await fetch(`${svc.debugUrl}/rlconfig`)).text();
    expect(rl).to.include("reload.key1: unit=HOUR requests_per_unit=50");
  });
});
