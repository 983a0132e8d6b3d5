// Statistics pushed to statsd over UDP (a real node:dgram listener in the test): every specified
// statistic path (docs/spec-rules.md#statistics-paths), counter deltas, gauges and timers,
// EXTRA_TAGS, the tagged format with mogrifiers, datagram sizes, DISABLE_STATS, standard output mode,
// and the validation of the new settings.

import { spawnSync } from "node:child_process";
import dgram from "node:dgram";
import net from "node:net";
import { expect } from "chai";
import { loadSettings } from "../../ratelimit/settings/environment.js";
import { MAX_DATAGRAM_BYTES, packLines } from "../../ratelimit/stats/statsd-sink.js";
import { commandPath, pause, RateLimitProcess, RuntimeDir, settingsProblems } from "./harness.js";

const RULES = `domain: push
descriptors:
  - {key: k, rate_limit: {unit: hour, requests_per_unit: 2}}
  - {key: shadow, shadow_mode: true, rate_limit: {unit: hour, requests_per_unit: 0}}
  - key: a
    descriptors:
      - {key: b, rate_limit: {unit: hour, requests_per_unit: 10}}
  - {key: many, detailed_metric: true, rate_limit: {unit: hour, requests_per_unit: 10}}
`;

/** A statsd daemon stand-in: every datagram received, as text. */
class UdpListener {
  readonly socket = dgram.createSocket("udp4");
  readonly datagrams: Buffer[] = [];
  port = 0;

  async start(): Promise<this> {
    this.socket.on("message", (msg) => this.datagrams.push(msg));
    await new Promise<void>((resolve) => this.socket.bind(0, "127.0.0.1", resolve));
    this.port = this.socket.address().port;
    return this;
  }

  lines(): string[] {
    return this.datagrams.flatMap((d) => d.toString("utf8").split("\n"));
  }

  /** Sum of the values of `name:<v>|c` lines (and the line's suffix must match when given). */
  counter(name: string, suffix = ""): number {
    let sum = 0;
    for (const l of this.lines()) {
      if (l.startsWith(`${name}:`) && l.endsWith(`|c${suffix}`))
        sum += Number(l.slice(name.length + 1, l.indexOf("|")));
    }
    return sum;
  }

  async until(what: string, fn: () => boolean, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (fn()) return;
      await pause(25);
    }
    throw new Error(`timed out waiting for ${what}; received:\n${this.lines().slice(-80).join("\n")}`);
  }

  close(): void {
    this.socket.close();
  }
}

describe("ratelimit statistics pushed to statsd", function () {
  this.timeout(60_000);
  const cleanup: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanup.splice(0).reverse()) await c();
  });

  const setup = async (env: Record<string, string>, backend: "memory" | "redis" = "memory") => {
    const udp = await new UdpListener().start();
    cleanup.push(() => udp.close());
    const runtime = new RuntimeDir({ "push.yaml": RULES });
    cleanup.push(() => runtime.cleanup());
    const svc = await RateLimitProcess.start({
      runtime,
      backend,
      env: { STATSD_HOST: "127.0.0.1", STATSD_PORT: String(udp.port), STATS_FLUSH_INTERVAL: "100ms", ...env },
    });
    cleanup.push(() => svc.stop());
    return { udp, svc, runtime };
  };

  it("pushes every statistic of the spec: rule, service, per-call, local cache gauges and timers", async () => {
    const { udp, svc, runtime } = await setup({ LOCAL_CACHE_SIZE_IN_BYTES: "100000", SHADOW_MODE: "true" });
    for (let i = 0; i < 4; i++) await svc.call("push", [[["k", "x"]]]);
    await svc.call("push", [[["shadow", "x"]]]);
    await svc.call("push", [
      [
        ["a", "1"],
        ["b", "2"],
      ],
    ]);
    await svc.call("nodomain", [[["k", "x"]]]);
    await svc.call("", [[["k", "x"]]]).catch(() => undefined);
    runtime.write("bad.yaml", "domain: bad\ndescriptors: [{key: k, rate_limit: {unit: fortnight}}]\n");

    const r = "ratelimit.service.rate_limit.";
    await udp.until("the statistics", () => udp.counter("ratelimit.service.config_load_error") === 1);
    await udp.until("the counters", () => udp.counter(`${r}push.k.total_hits`) === 4);
    expect(udp.counter(`${r}push.k.within_limit`)).to.equal(2);
    expect(udp.counter(`${r}push.k.near_limit`)).to.equal(1);
    expect(udp.counter(`${r}push.k.over_limit`)).to.equal(2);
    expect(udp.counter(`${r}push.k.over_limit_with_local_cache`)).to.equal(1);
    expect(udp.counter(`${r}push.shadow.shadow_mode`)).to.equal(1);
    expect(udp.counter(`${r}push.a.b.total_hits`)).to.equal(1);
    expect(udp.counter(`${r}nodomain.domain_not_found`)).to.equal(1);
    expect(udp.counter("ratelimit.service.config_load_success")).to.equal(1);
    expect(udp.counter("ratelimit.service.global_shadow_mode")).to.be.greaterThan(0);
    expect(udp.counter("ratelimit.service.call.should_rate_limit.service_error")).to.equal(1);
    expect(udp.counter("ratelimit_server.ShouldRateLimit.total_requests")).to.equal(8);
    const timersOf = () =>
      udp.lines().filter((l) => l.startsWith("ratelimit_server.ShouldRateLimit.response_time:"));
    // A flush can span several datagrams: the timers may arrive just after the counters.
    await udp.until("the timers", () => timersOf().length >= 8);
    const timers = timersOf();
    expect(timers).to.have.length(8);
    for (const t of timers)
      expect(t).to.match(/^ratelimit_server\.ShouldRateLimit\.response_time:\d+(\.\d+)?\|ms$/);
    for (const g of [
      "hitCount",
      "missCount",
      "lookupCount",
      "overwriteCount",
      "evacuateCount",
      "expiredCount",
      "entryCount",
      "averageAccessTime",
    ])
      expect(
        udp.lines().some((l) => new RegExp(`^ratelimit\\.localcache\\.${g}:\\d+\\|g$`).test(l)),
        g,
      ).to.equal(true);
    expect(udp.lines().some((l) => l === "ratelimit.localcache.hitCount:1|g")).to.equal(true);

    // Counters are deltas: one more hit adds exactly 1 to what the daemon summed.
    await svc.call("push", [
      [
        ["a", "1"],
        ["b", "2"],
      ],
    ]);
    await udp.until("the next delta", () => udp.counter(`${r}push.a.b.total_hits`) === 2);
    await pause(300);
    expect(udp.counter(`${r}push.a.b.total_hits`)).to.equal(2);
    expect(udp.counter(`${r}push.k.total_hits`)).to.equal(4);
  });

  it("counts redis_error when the key-value store cannot be reached", async () => {
    const closed = net.createServer(); // a port nobody listens on once closed
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as net.AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const { udp, svc } = await setup({ KVSTORE_URL: `127.0.0.1:${port}`, KVSTORE_TIMEOUT: "200ms" }, "redis");
    await svc.call("push", [[["k", "x"]]]).catch(() => undefined);
    await udp.until(
      "redis_error",
      () => udp.counter("ratelimit.service.call.should_rate_limit.redis_error") === 1,
    );
  });

  it("puts EXTRA_TAGS into the name (untagged format) and packs lines into datagrams under 1432 bytes", async () => {
    const { udp, svc } = await setup({ EXTRA_TAGS: "zone:eu-1,app:rl" });
    for (let i = 0; i < 60; i++) await svc.call("push", [[["many", `value-number-${i}-${"x".repeat(20)}`]]]);
    const name = "ratelimit.service.rate_limit.push.many_value-number-7-xxxxxxxxxxxxxxxxxxxx.total_hits";
    await udp.until("the tagged names", () => udp.counter(`${name}.__app=rl.__zone=eu-1`) === 1);
    await udp.until(
      "every value",
      () => udp.lines().filter((l) => l.includes(".total_hits.__app=rl")).length === 60,
    );
    expect(udp.datagrams.length).to.be.greaterThan(1);
    for (const d of udp.datagrams) expect(d.length).to.be.at.most(MAX_DATAGRAM_BYTES);
    for (const l of udp.lines()) expect(l).to.match(/^[^:|\n]+:-?[\d.]+\|(c|g|ms)(\|@[\d.]+)?$/);
  });

  it("sends DogStatsD tags and applies the mogrifiers with USE_TAGGED_PUSH_STATS", async () => {
    const { udp, svc } = await setup({
      USE_TAGGED_PUSH_STATS: "true",
      EXTRA_TAGS: "env:test",
      TAGGED_PUSH_STATS_MOGRIFIERS: "RULE,CALLS",
      TAGGED_PUSH_STATS_MOGRIFIER_RULE_PATTERN:
        "^ratelimit\\.service\\.rate_limit\\.([^.]+)\\.(.+)\\.([^.]+)$",
      TAGGED_PUSH_STATS_MOGRIFIER_RULE_NAME: "ratelimit.service.rate_limit.$3",
      TAGGED_PUSH_STATS_MOGRIFIER_RULE_TAGS: "domain:$1,descriptor:$2",
      TAGGED_PUSH_STATS_MOGRIFIER_CALLS_PATTERN: "^ratelimit_server\\.(\\w+)\\.(\\w+)$",
      TAGGED_PUSH_STATS_MOGRIFIER_CALLS_NAME: "ratelimit_server.$2",
      TAGGED_PUSH_STATS_MOGRIFIER_CALLS_TAGS: "method:$1",
    });
    await svc.call("push", [
      [
        ["a", "1"],
        ["b", "2"],
      ],
    ]);
    await udp.until("the mogrified counter", () =>
      udp
        .lines()
        .includes("ratelimit.service.rate_limit.total_hits:1|c|#env:test,domain:push,descriptor:a.b"),
    );
    await udp.until("the mogrified timer", () =>
      udp
        .lines()
        .some((l) =>
          /^ratelimit_server\.response_time:[\d.]+\|ms\|#env:test,method:ShouldRateLimit$/.test(l),
        ),
    );
    expect(udp.lines()).to.include("ratelimit_server.total_requests:1|c|#env:test,method:ShouldRateLimit");
    expect(udp.lines()).to.include("ratelimit.service.config_load_success:1|c|#env:test");
  });

  it("sends nothing with DISABLE_STATS=true, and writes to standard output with USE_PUSH_STATS=false", async () => {
    const off = await setup({ DISABLE_STATS: "true" });
    await off.svc.call("push", [[["k", "x"]]]);
    await pause(400);
    expect(off.udp.datagrams).to.have.length(0);
    expect(await off.svc.stats()).to.have.property("size", 0);

    const stdout = await setup({ USE_PUSH_STATS: "false" });
    await stdout.svc.call("push", [[["k", "y"]]]);
    await stdout.svc.until("stats on standard output", async () =>
      stdout.svc.output.includes("ratelimit.service.rate_limit.push.k.total_hits: 1"),
    );
    expect(stdout.udp.datagrams).to.have.length(0);
  });

  it("validates the push settings and exits 2 naming each bad variable", () => {
    const bad = settingsProblems;
    expect(bad({ STATSD_PORT: "99999" })).to.contain("STATSD_PORT=99999");
    expect(bad({ STATSD_PORT: "x" })).to.contain("STATSD_PORT");
    expect(bad({ STATS_FLUSH_INTERVAL: "0" })).to.contain("STATS_FLUSH_INTERVAL");
    expect(bad({ USE_TAGGED_PUSH_STATS: "maybe" })).to.contain("USE_TAGGED_PUSH_STATS");
    expect(bad({ TAGGED_PUSH_STATS_MOGRIFIERS: "A" })).to.contain(
      "TAGGED_PUSH_STATS_MOGRIFIER_A_PATTERN: required",
    );
    expect(bad({ TAGGED_PUSH_STATS_MOGRIFIERS: "A", TAGGED_PUSH_STATS_MOGRIFIER_A_PATTERN: "(" })).to.contain(
      'TAGGED_PUSH_STATS_MOGRIFIER_A_PATTERN="(": not a regular expression',
    );
    expect(bad({ TAGGED_PUSH_STATS_MOGRIFIERS: "A", TAGGED_PUSH_STATS_MOGRIFIER_A_PATTERN: "x" })).to.contain(
      "TAGGED_PUSH_STATS_MOGRIFIER_A_NAME: required",
    );
    // The reference's names: the rule list in USE_DOG_STATSD_MOGRIFIERS, the rules in DOG_STATSD_MOGRIFIER_*.
    expect(
      bad({
        USE_DOG_STATSD_MOGRIFIERS: "A",
        DOG_STATSD_MOGRIFIER_A_PATTERN: "x",
        DOG_STATSD_MOGRIFIER_A_NAME: "y",
        DOG_STATSD_MOGRIFIER_A_TAGS: "novalue",
      }),
    ).to.contain("DOG_STATSD_MOGRIFIER_A_TAGS");

    const s = loadSettings({});
    expect([
      s.useStatsd,
      s.statsdHost,
      s.statsdPort,
      s.statsFlushIntervalMs,
      s.useTaggedPushStats,
    ]).to.deep.equal([true, "localhost", 8125, 10_000, false]);
    const legacy = loadSettings({ USE_STATSD: "false", USE_DOG_STATSD: "true" });
    expect([legacy.useStatsd, legacy.useTaggedPushStats]).to.deep.equal([false, true]);
    const mogrified = loadSettings({
      USE_DOG_STATSD_MOGRIFIERS: "A",
      DOG_STATSD_MOGRIFIER_A_PATTERN: "^ratelimit\\.(.*)$",
      DOG_STATSD_MOGRIFIER_A_NAME: "rl.$1",
    });
    expect(mogrified.taggedPushStatsMogrifiers).to.have.length(1);

    const run = spawnSync(process.execPath, [commandPath("ratelimit")], {
      env: { ...process.env, STATSD_PORT: "0", TAGGED_PUSH_STATS_MOGRIFIERS: "X" },
      encoding: "utf8",
    });
    expect(run.status).to.equal(2);
    expect(run.stderr).to.contain("STATSD_PORT=0").and.to.contain("TAGGED_PUSH_STATS_MOGRIFIER_X_PATTERN");
  });

  it("packs lines without splitting them", () => {
    const lines = Array.from({ length: 100 }, (_, i) => `stat.${i}.${"y".repeat(i)}:1|c`);
    const packets = packLines(lines, 300);
    expect(packets.flatMap((p) => p.toString().split("\n"))).to.deep.equal(lines);
    for (const p of packets) if (p.toString().includes("\n")) expect(p.length).to.be.at.most(300);
    expect(packLines([])).to.have.length(0);
  });
});
