// Statistics scraped over HTTP in the Prometheus text format (USE_PULL_STATS): the built-in mapping
// (docs/spec-rules.md#pull-statistics), PULL_STATS_PATH, PULL_STATS_RESPONSE_TIME_AS_MILLISECONDS, a
// PULL_STATS_MAPPER_YAML file, and the validation of these settings.

import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { expect } from "chai";
import { loadSettings } from "../../ratelimit/settings/environment.js";
import { commandPath, parseExposition, RateLimitProcess, RuntimeDir, settingsProblems } from "./harness.js";

const RULES = `domain: pull
descriptors:
  - {key: k, rate_limit: {unit: hour, requests_per_unit: 2}}
  - {key: shadow, shadow_mode: true, rate_limit: {unit: hour, requests_per_unit: 0}}
  - key: a
    descriptors:
      - key: b
        descriptors:
          - {key: c, rate_limit: {unit: hour, requests_per_unit: 10}}
      - {key: d, rate_limit: {unit: hour, requests_per_unit: 10}}
`;

describe("ratelimit statistics pulled in Prometheus format", function () {
  this.timeout(60_000);
  const cleanup: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanup.splice(0).reverse()) await c();
  });

  const start = async (env: Record<string, string>) => {
    const runtime = new RuntimeDir({ "pull.yaml": RULES });
    cleanup.push(() => runtime.cleanup());
    const svc = await RateLimitProcess.start({
      runtime,
      backend: "memory",
      env: { USE_PULL_STATS: "true", PULL_STATS_ADDR: "127.0.0.1:0", ...env },
    });
    cleanup.push(() => svc.stop());
    const started = svc.output.split("\n").find((l) => l.includes("rate limit service started"))!;
    const url = `http://${(JSON.parse(started) as { pullStats: string }).pullStats}`;
    const scrape = async () => {
      const res = await fetch(url);
      expect(res.status).to.equal(200);
      expect(res.headers.get("content-type")).to.contain("text/plain");
      const text = await res.text();
      return { text, values: parseExposition(text) };
    };
    return { svc, runtime, url, scrape };
  };

  it("serves the built-in mapping of the spec on PULL_STATS_ADDR/metrics", async () => {
    const { svc, runtime, url, scrape } = await start({
      LOCAL_CACHE_SIZE_IN_BYTES: "100000",
      SHADOW_MODE: "true",
    });
    for (let i = 0; i < 3; i++) await svc.call("pull", [[["k", "x"]]]);
    await svc.call("pull", [[["shadow", "x"]]]);
    await svc.call("pull", [
      [
        ["a", "1"],
        ["b", "2"],
        ["c", "3"],
      ],
    ]);
    await svc.call("pull", [
      [
        ["a", "1"],
        ["d", "2"],
      ],
    ]);
    await svc.call("", [[["k", "x"]]]).catch(() => undefined);

    const { text, values } = await scrape();
    const rl = "ratelimit_service_rate_limit";
    expect(values.get(`${rl}_total_hits{domain="pull",key1="k"}`)).to.equal(3);
    expect(values.get(`${rl}_within_limit{domain="pull",key1="k"}`)).to.equal(2);
    expect(values.get(`${rl}_near_limit{domain="pull",key1="k"}`)).to.equal(1);
    expect(values.get(`${rl}_over_limit{domain="pull",key1="k"}`)).to.equal(1);
    expect(values.get(`${rl}_shadow_mode{domain="pull",key1="shadow"}`)).to.equal(1);
    expect(values.get(`${rl}_total_hits{domain="pull",key1="a",key2="b.c"}`)).to.equal(1);
    expect(values.get(`${rl}_total_hits{domain="pull",key1="a",key2="d"}`)).to.equal(1);
    expect(values.get('ratelimit_service_should_rate_limit_error{err_type="service_error"}')).to.equal(1);
    expect(values.get('ratelimit_service_total_requests{grpc_method="ShouldRateLimit"}')).to.equal(7);
    expect(
      values.get('ratelimit_service_response_time_seconds_count{grpc_method="ShouldRateLimit"}'),
    ).to.equal(7);
    expect(
      values.get('ratelimit_service_response_time_seconds_sum{grpc_method="ShouldRateLimit"}'),
    ).to.be.below(7);
    expect(text).to.contain("# TYPE ratelimit_service_response_time_seconds histogram");
    expect(text).to.contain("# TYPE ratelimit_service_total_requests counter");
    expect(values.get("ratelimit_service_config_load_success")).to.equal(1);
    expect(values.get("ratelimit_service_config_load_error")).to.equal(undefined);
    // Not in the mapping: the statsd name with `.` turned into `_`.
    expect(values.get("ratelimit_service_global_shadow_mode")).to.equal(1);
    expect(values.get("ratelimit_localcache_hitCount")).to.equal(0);
    expect(text).to.contain("# TYPE ratelimit_localcache_entryCount gauge");

    // Counters keep growing between scrapes; a failed reload shows up as an error.
    await svc.call("pull", [[["k", "x"]]]);
    runtime.write("bad.yaml", "domain: bad\ndescriptors: [{key: k, rate_limit: {unit: fortnight}}]\n");
    await svc.until(
      "the reload error",
      async () => (await scrape()).values.get("ratelimit_service_config_load_error") === 1,
    );
    const again = (await scrape()).values;
    expect(again.get(`${rl}_total_hits{domain="pull",key1="k"}`)).to.equal(4);
    expect(again.get("ratelimit_localcache_hitCount")).to.equal(1);

    const other = await fetch(url.replace("/metrics", "/other"));
    expect(other.status).to.equal(404);
  });

  it("honours PULL_STATS_PATH and PULL_STATS_RESPONSE_TIME_AS_MILLISECONDS", async () => {
    const { svc, url, scrape } = await start({
      PULL_STATS_PATH: "/prom",
      PULL_STATS_RESPONSE_TIME_AS_MILLISECONDS: "true",
    });
    expect(url.endsWith("/prom")).to.equal(true);
    await svc.call("pull", [[["k", "x"]]]);
    const { text } = await scrape();
    // The legacy unit: the histogram's sum is the calls' time in milliseconds, not seconds.
    const sum = parseExposition(text).get(
      'ratelimit_service_response_time_seconds_sum{grpc_method="ShouldRateLimit"}',
    )!;
    const ms = (await svc.stats()).get("ratelimit_server.ShouldRateLimit.response_time.sum_ms")!;
    expect(sum).to.be.closeTo(ms, 0.01);
  });

  it("reads the reference's names: USE_PROMETHEUS, PROMETHEUS_ADDR, _PATH, _RESPONSE_TIME_AS_MILLISECONDS, _MAPPER_YAML", async () => {
    const runtime = new RuntimeDir({ "pull.yaml": RULES });
    cleanup.push(() => runtime.cleanup());
    const file = path.join(runtime.base, "reference-mapper.yaml");
    writeFileSync(
      file,
      "mappings:\n  - match: ratelimit.service.rate_limit.*.*.total_hits\n    name: hits_by_domain\n    labels: {domain: $1}\n",
    );
    const svc = await RateLimitProcess.start({
      runtime,
      backend: "memory",
      env: {
        USE_PROMETHEUS: "true",
        PROMETHEUS_ADDR: "127.0.0.1:0",
        PROMETHEUS_PATH: "/prom-ref",
        PROMETHEUS_MAPPER_YAML: file,
      },
    });
    cleanup.push(() => svc.stop());
    const started = svc.output.split("\n").find((l) => l.includes("rate limit service started"))!;
    const pull = (JSON.parse(started) as { pullStats: string }).pullStats;
    expect(pull.endsWith("/prom-ref")).to.equal(true);
    await svc.call("pull", [[["k", "x"]]]);
    const text = await (await fetch(`http://${pull}`)).text();
    expect(parseExposition(text).get('hits_by_domain{domain="pull"}')).to.equal(1);
    const ms = loadSettings({ PROMETHEUS_RESPONSE_TIME_AS_MILLISECONDS: "true" });
    expect(ms.pullStatsResponseTimeAsMilliseconds).to.equal(true);
    expect(settingsProblems({ PROMETHEUS_ADDR: "9090" })).to.contain('PROMETHEUS_ADDR="9090"');
    expect(settingsProblems({ PROMETHEUS_MAPPER_YAML: "/nonexistent.yaml" })).to.contain(
      "PROMETHEUS_MAPPER_YAML=/nonexistent.yaml",
    );
  });

  it("maps with a PULL_STATS_MAPPER_YAML file (globs, regex, labels, drop; the rest escaped)", async () => {
    const runtime = new RuntimeDir();
    cleanup.push(() => runtime.cleanup());
    const file = path.join(runtime.base, "mapper.yaml");
    writeFileSync(
      file,
      `mappings:
  - match: "ratelimit.service.rate_limit.*.*.total_hits"
    name: "rl_hits_$1"
    labels: {rule: "$2", source: "custom"}
  - match: 'ratelimit\\.service\\.rate_limit\\.pull\\.(.+)\\.over_limit'
    match_type: regex
    name: rl_over
    labels: {rule: "$1"}
  - match: "ratelimit_server.*.response_time"
    name: rl_latency_ms
    observer_type: summary
  - match: "ratelimit.service.rate_limit.*.*.*"
    action: drop
`,
    );
    const { svc, scrape } = await start({ PULL_STATS_MAPPER_YAML: file });
    for (let i = 0; i < 3; i++) await svc.call("pull", [[["k", "x"]]]);
    const { text, values } = await scrape();
    expect(values.get('rl_hits_pull{rule="k",source="custom"}')).to.equal(3);
    expect(values.get('rl_over{rule="k"}')).to.equal(1);
    expect(text).to.contain("# TYPE rl_latency_ms summary");
    expect(values.get("rl_latency_ms_count")).to.equal(3);
    expect(text).not.to.contain("within_limit");
    expect(text).not.to.contain("ratelimit_service_total_requests");
    expect(values.get("ratelimit_server_ShouldRateLimit_total_requests")).to.equal(3);
  });

  it("validates the pull settings and exits 2 naming each bad variable", () => {
    const problems = settingsProblems;
    const runtime = new RuntimeDir();
    cleanup.push(() => runtime.cleanup());
    const file = path.join(runtime.base, "bad-mapper.yaml");
    const mapper = (text: string) => {
      writeFileSync(file, text);
      return problems({ PULL_STATS_MAPPER_YAML: file });
    };
    expect(problems({ PULL_STATS_ADDR: "9090" })).to.contain('PULL_STATS_ADDR="9090"');
    expect(problems({ PULL_STATS_PATH: "metrics" })).to.contain("PULL_STATS_PATH");
    expect(problems({ USE_PULL_STATS: "yes please" })).to.contain("USE_PULL_STATS");
    expect(problems({ PULL_STATS_MAPPER_YAML: "/nonexistent/mapper.yaml" })).to.contain(
      "PULL_STATS_MAPPER_YAML=/nonexistent/mapper.yaml",
    );
    expect(mapper("mappings: [{match: a.b}]")).to.contain("mappings[0].name: required");
    expect(mapper("mappings: [{match: a.b, name: x, labelz: {}}]")).to.contain(
      "mappings[0]: unknown key 'labelz'",
    );
    expect(mapper("mappings: [{match: '(', match_type: regex, name: x}]")).to.contain(
      "not a regular expression",
    );
    expect(mapper("mappings: [{match: a.b, name: x, labels: {'1bad': v}}]")).to.contain(
      "invalid label name '1bad'",
    );
    expect(mapper("mappings: [{match: a.b, name: x, observer_type: gauge}]")).to.contain("observer_type");
    expect(mapper("nothing: here")).to.contain("`mappings` list");

    const s = loadSettings({});
    expect([
      s.usePullStats,
      s.pullStatsAddr,
      s.pullStatsPath,
      s.pullStatsMapperYaml,
      s.pullStatsResponseTimeAsMilliseconds,
    ]).to.deep.equal([false, { host: "", port: 9090 }, "/metrics", "", false]);
    expect(loadSettings({ PULL_STATS_ADDR: "[::1]:9102" }).pullStatsAddr).to.deep.equal({
      host: "::1",
      port: 9102,
    });

    writeFileSync(file, "mappings: 3\n");
    const run = spawnSync(process.execPath, [commandPath("ratelimit")], {
      env: { ...process.env, USE_PULL_STATS: "true", PULL_STATS_MAPPER_YAML: file, PULL_STATS_ADDR: "x" },
      encoding: "utf8",
    });
    expect(run.status).to.equal(2);
    expect(run.stderr).to.contain("PULL_STATS_MAPPER_YAML=").and.to.contain("PULL_STATS_ADDR");
  });
});
