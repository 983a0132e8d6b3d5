// Counters in real Redis (and the in-memory backend): key format and expiry,
// limitRemaining and durationUntilReset, near/over/within statistics and their
// hits_addend arithmetic, NEAR_LIMIT_RATIO, STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT,
// the local over-limit cache, per-second Redis, and expiry jitter.

import { expect } from "chai";
import { Redis } from "ioredis";
import { RateLimitResponse_Code as Code } from "../../proto/gen/envoy/service/ratelimit/v3/rls.js";
import { clearOfWindowEdge, pause, RateLimitProcess, REDIS_URL, RuntimeDir, uniq } from "./harness.js";

const CONFIG = `domain: counters
descriptors:
  - {key: hour15, rate_limit: {unit: hour, requests_per_unit: 15}}
  - {key: hour14, rate_limit: {unit: hour, requests_per_unit: 14}}
  - {key: key2, rate_limit: {unit: minute, requests_per_unit: 20}}
  - {key: key3, rate_limit: {unit: hour, requests_per_unit: 10}}
  - {key: key4, rate_limit: {unit: day, requests_per_unit: 20}}
  - {key: sec, rate_limit: {unit: second, requests_per_unit: 100}}
  - {key: block, rate_limit: {unit: hour, requests_per_unit: 0}}
  - {key: m20, detailed_metric: true, rate_limit: {unit: hour, requests_per_unit: 20}}
  - {key: m8, detailed_metric: true, rate_limit: {unit: hour, requests_per_unit: 8}}
  - {key: m10, detailed_metric: true, rate_limit: {unit: hour, requests_per_unit: 10}}
  - key: parent
    value: p
    descriptors:
      - {key: child, rate_limit: {unit: minute, requests_per_unit: 10}}
`;

const [redisHost, redisPort] = REDIS_URL.split(":") as [string, string];
const redis = (db = 0) => new Redis({ host: redisHost, port: Number(redisPort), db, lazyConnect: false });
const hourStart = () => Math.floor(Date.now() / 1000 / 3600) * 3600;

describe("ratelimit counters (Redis)", function () {
  this.timeout(60_000);
  let runtime: RuntimeDir;
  let svc: RateLimitProcess;
  let r: Redis;

  before(async () => {
    runtime = new RuntimeDir({ "counters.yaml": CONFIG });
    svc = await RateLimitProcess.start({ runtime });
    r = redis();
  });
  after(async () => {
    await svc?.stop();
    r?.disconnect();
    runtime?.cleanup();
  });

  it("uses the key <prefix><domain>_<key>_<value>_<windowStart> with INCRBY and an EXPIRE of one window", async () => {
    const v = uniq();
    await svc.call("counters", [[["hour15", v]]]);
    const key = `${svc.prefix}counters_hour15_${v}_${hourStart()}`;
    expect(await r.get(key)).to.equal("1");
    const ttl = await r.ttl(key);
    expect(ttl).to.be.within(3590, 3600);
    const nested = uniq();
    await svc.call("counters", [
      [
        ["parent", "p"],
        ["child", nested],
      ],
    ]);
    const minute = Math.floor(Date.now() / 60_000) * 60;
    expect(await r.get(`${svc.prefix}counters_parent_p_child_${nested}_${minute}`)).to.equal("1");
  });

  it("counts down limitRemaining and turns OVER_LIMIT past the limit, with near/over/within stats", async () => {
    const v = uniq();
    const seen: [Code, number][] = [];
    for (let i = 0; i < 17; i++) {
      const s = (await svc.call("counters", [[["hour15", v]]])).statuses[0]!;
      seen.push([s.code, s.limitRemaining]);
    }
    expect(seen.slice(0, 15).map(([, rem]) => rem)).to.deep.equal([
      14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0,
    ]);
    expect(seen.slice(0, 15).every(([c]) => c === Code.OK)).to.equal(true);
    expect(seen.slice(15)).to.deep.equal([
      [Code.OVER_LIMIT, 0],
      [Code.OVER_LIMIT, 0],
    ]);
  });

  it("near_limit counts hits above floor(limit*0.8) within the limit; over_limit the rest (hits_addend arithmetic)", async () => {
    // [limit key, hits, counter after the call] → expected status and stats, as in the reference's tests.
    const cases: [string, number, number, Code, number, { near: number; over: number; within: number }][] = [
      ["m20", 3, 5, Code.OK, 15, { near: 0, over: 0, within: 3 }],
      ["m8", 2, 7, Code.OK, 1, { near: 1, over: 0, within: 2 }],
      ["m20", 3, 19, Code.OK, 1, { near: 3, over: 0, within: 3 }],
      ["m20", 3, 22, Code.OVER_LIMIT, 0, { near: 1, over: 2, within: 0 }],
      ["m20", 7, 22, Code.OVER_LIMIT, 0, { near: 4, over: 2, within: 0 }],
      ["m10", 3, 30, Code.OVER_LIMIT, 0, { near: 0, over: 3, within: 0 }],
    ];
    for (const [key, hits, after, code, remaining, want] of cases) {
      const v = uniq();
      await r.set(`${svc.prefix}counters_${key}_${v}_${hourStart()}`, after - hits, "EX", 3600);
      const s = (await svc.call("counters", [{ entries: [[key, v]], hitsAddend: BigInt(hits) }]))
        .statuses[0]!;
      const label = `${key} hits=${hits} after=${after}`;
      expect([s.code, s.limitRemaining], label).to.deep.equal([code, remaining]);
      const stats = await svc.stats();
      const base = `ratelimit.service.rate_limit.counters.${key}_${v}.`;
      expect(
        {
          near: stats.get(`${base}near_limit`) ?? 0,
          over: stats.get(`${base}over_limit`) ?? 0,
          within: stats.get(`${base}within_limit`) ?? 0,
        },
        label,
      ).to.deep.equal(want);
      expect(stats.get(`${base}total_hits`), label).to.equal(hits);
    }
  });

  it("the near-limit sequence 11, 13, 16 of a 15/hour limit", async () => {
    const v = uniq();
    const key = `${svc.prefix}counters_hour15_${v}_${hourStart()}`;
    const base = `ratelimit.service.rate_limit.counters.hour15.`;
    const before = await svc.stats();
    const statDelta = async (name: string) =>
      ((await svc.stats()).get(base + name) ?? 0) - (before.get(base + name) ?? 0);
    const out: [number, number, number, number][] = [];
    for (const preset of [10, 12, 15]) {
      await r.set(key, preset, "EX", 3600);
      const s = (await svc.call("counters", [[["hour15", v]]])).statuses[0]!;
      out.push([
        s.limitRemaining,
        await statDelta("near_limit"),
        await statDelta("over_limit"),
        await statDelta("within_limit"),
      ]);
    }
    expect(out).to.deep.equal([
      [4, 0, 0, 1],
      [2, 1, 0, 2],
      [0, 1, 1, 2],
    ]);
  });

  it("a descriptor's hits_addend 0 checks without counting; the request's 0 means 1", async () => {
    const v = uniq();
    await r.set(`${svc.prefix}counters_key3_${v}_${hourStart()}`, 11, "EX", 3600);
    const s = (await svc.call("counters", [{ entries: [["key3", v]], hitsAddend: 0n }])).statuses[0]!;
    expect(s.code).to.equal(Code.OVER_LIMIT);
    const w = uniq();
    const one = (await svc.call("counters", [[["key3", w]]], 0)).statuses[0]!;
    expect(one.limitRemaining).to.equal(9);
    const five = (await svc.call("counters", [[["key3", w]]], 5)).statuses[0]!;
    expect(five.limitRemaining).to.equal(4);
    const own = (await svc.call("counters", [{ entries: [["key3", w]], hitsAddend: 2n }], 5)).statuses[0]!;
    expect(own.limitRemaining).to.equal(2);
  });

  it("requests_per_unit 0 blocks every request", async () => {
    const s = (await svc.call("counters", [[["block", uniq()]]])).statuses[0]!;
    expect(s.code).to.equal(Code.OVER_LIMIT);
  });

  it("every descriptor is evaluated; the overall code is OVER_LIMIT when any is over", async () => {
    await clearOfWindowEdge(60);
    const v = uniq();
    const rows: [Code, Code, number, Code, number][] = [];
    for (let i = 1; i <= 12; i++) {
      const res = await svc.call("counters", [[["key2", v]], [["key3", v]]]);
      const [a, b] = res.statuses as [(typeof res.statuses)[0], (typeof res.statuses)[0]];
      rows.push([res.overallCode, a.code, a.limitRemaining, b.code, b.limitRemaining]);
    }
    expect(rows[9]).to.deep.equal([Code.OK, Code.OK, 10, Code.OK, 0]);
    expect(rows[10]).to.deep.equal([Code.OVER_LIMIT, Code.OK, 9, Code.OVER_LIMIT, 0]);
    expect(rows[11]).to.deep.equal([Code.OVER_LIMIT, Code.OK, 8, Code.OVER_LIMIT, 0]);
  });

  it("durationUntilReset is the time to the end of the epoch-aligned window and shrinks", async () => {
    const v = uniq();
    const first = (await svc.call("counters", [[["key4", v]]])).statuses[0]!.durationUntilReset!;
    const now = Math.floor(Date.now() / 1000);
    expect(Number(first.seconds)).to.be.within(86_400 - (now % 86_400) - 2, 86_400 - (now % 86_400) + 1);
    await pause(1100);
    const second = (await svc.call("counters", [[["key4", v]]])).statuses[0]!.durationUntilReset!;
    expect(Number(second.seconds)).to.be.lessThan(Number(first.seconds));
    const sec = (await svc.call("counters", [[["sec", v]]])).statuses[0]!.durationUntilReset!;
    expect(Number(sec.seconds)).to.equal(1);
  });
});

describe("ratelimit counters: settings that change counting", function () {
  this.timeout(60_000);
  let runtime: RuntimeDir;
  const started: RateLimitProcess[] = [];
  const start = async (env: Record<string, string>, backend?: "memory") => {
    const p = await RateLimitProcess.start({ runtime, env, backend });
    started.push(p);
    return p;
  };

  before(() => {
    runtime = new RuntimeDir({ "counters.yaml": CONFIG });
  });
  after(async () => {
    await Promise.all(started.map((p) => p.stop()));
    runtime?.cleanup();
  });

  it("STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT: only the keys that would go over are incremented", async () => {
    const svc = await start({ STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT: "true" });
    const r = redis();
    try {
      const v = uniq();
      const k1 = `${svc.prefix}counters_hour15_${v}_${hourStart()}`;
      const k2 = `${svc.prefix}counters_hour14_${v}_${hourStart()}`;
      await r.set(k1, 13, "EX", 3600);
      await r.set(k2, 13, "EX", 3600);
      const res = await svc.call("counters", [[["hour15", v]], [["hour14", v]]], 2);
      expect(res.statuses.map((s) => [s.code, s.limitRemaining])).to.deep.equal([
        [Code.OK, 2],
        [Code.OVER_LIMIT, 0],
      ]);
      expect([await r.get(k1), await r.get(k2)]).to.deep.equal(["13", "15"]);

      // The reference's integration sequence: key2's remaining freezes at 10 once key3 is over.
      await clearOfWindowEdge(60);
      const w = uniq();
      let last = -1;
      for (let i = 1; i <= 15; i++) {
        const out = await svc.call("counters", [[["key2", w]], [["key3", w]]]);
        last = out.statuses[0]!.limitRemaining;
      }
      expect(last).to.equal(10);
      expect(await svc.stat("ratelimit.service.rate_limit.counters.key2.total_hits")).to.equal(15);
    } finally {
      r.disconnect();
    }
  });

  it("the local cache answers over-limit keys without Redis and counts over_limit_with_local_cache", async () => {
    const svc = await start({ LOCAL_CACHE_SIZE_IN_BYTES: "100000" });
    const r = redis();
    try {
      const v = uniq();
      const codes: Code[] = [];
      for (let i = 1; i <= 13; i++)
        codes.push((await svc.call("counters", [[["key3", v]]])).statuses[0]!.code);
      expect(codes.filter((c) => c === Code.OVER_LIMIT)).to.have.length(3);
      // Call 11 went to Redis and filled the local cache; calls 12 and 13 did not reach Redis.
      expect(await r.get(`${svc.prefix}counters_key3_${v}_${hourStart()}`)).to.equal("11");
      const stats = await svc.stats();
      expect(stats.get("ratelimit.service.rate_limit.counters.key3.over_limit")).to.equal(3);
      expect(stats.get("ratelimit.service.rate_limit.counters.key3.over_limit_with_local_cache")).to.equal(2);
      expect(stats.get("ratelimit.localcache.hitCount")).to.equal(2);
      expect(stats.get("ratelimit.localcache.entryCount")).to.equal(1);
    } finally {
      r.disconnect();
    }
  });

  it("NEAR_LIMIT_RATIO moves the near-limit threshold", async () => {
    const svc = await start({ NEAR_LIMIT_RATIO: "0.5" });
    const v = uniq();
    for (let i = 0; i < 7; i++) await svc.call("counters", [[["key3", v]]]);
    // Limit 10, threshold 5: hits 6 and 7 are near the limit.
    expect(await svc.stat("ratelimit.service.rate_limit.counters.key3.near_limit")).to.equal(2);
  });

  it("EXPIRATION_JITTER_MAX_SECONDS adds up to that many seconds to the expiry", async () => {
    const svc = await start({ EXPIRATION_JITTER_MAX_SECONDS: "3600" });
    const r = redis();
    try {
      const ttls: number[] = [];
      for (let i = 0; i < 10; i++) {
        const v = uniq();
        await svc.call("counters", [[["key3", v]]]);
        ttls.push(await r.ttl(`${svc.prefix}counters_key3_${v}_${hourStart()}`));
      }
      for (const t of ttls) expect(t).to.be.within(3590, 7200);
      expect(new Set(ttls).size).to.be.greaterThan(1);
    } finally {
      r.disconnect();
    }
  });

  it("KVSTORE_PERSECOND sends SECOND windows to the second store and the rest to the first", async () => {
    const svc = await start({ KVSTORE_PERSECOND: "true", KVSTORE_PERSECOND_URL: `redis://${REDIS_URL}/5` });
    const main = redis(0);
    const second = redis(5);
    try {
      const v = uniq();
      const res = await svc.call("counters", [[["sec", v]], [["key3", v]]]);
      expect(res.statuses.map((s) => s.limitRemaining)).to.deep.equal([99, 9]);
      const secKeys = await second.keys(`${svc.prefix}counters_sec_${v}_*`);
      const mainSecKeys = await main.keys(`${svc.prefix}counters_sec_${v}_*`);
      expect([secKeys.length, mainSecKeys.length]).to.deep.equal([1, 0]);
      expect(await main.get(`${svc.prefix}counters_key3_${v}_${hourStart()}`)).to.equal("1");
      expect(await second.exists(`${svc.prefix}counters_key3_${v}_${hourStart()}`)).to.equal(0);
    } finally {
      main.disconnect();
      second.disconnect();
    }
  });

  it("KVSTORE_PIPELINE_WINDOW > 0 batches concurrent decisions and still counts exactly", async () => {
    const svc = await start({ KVSTORE_PIPELINE_WINDOW: "150us", KVSTORE_POOL_SIZE: "2" });
    const r = redis();
    try {
      const v = uniq();
      const results = await Promise.all(
        Array.from({ length: 30 }, () => svc.call("counters", [[["key3", v]]])),
      );
      const remaining = results.map((x) => x.statuses[0]!.limitRemaining).sort((a, b) => a - b);
      expect(results.filter((x) => x.overallCode === Code.OK)).to.have.length(10);
      expect(remaining.slice(20)).to.deep.equal([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      expect(await r.get(`${svc.prefix}counters_key3_${v}_${hourStart()}`)).to.equal("30");
    } finally {
      r.disconnect();
    }
  });

  it("the in-memory backend gives the same answers without Redis", async () => {
    const svc = await start({}, "memory");
    await clearOfWindowEdge(60);
    const v = uniq();
    const rem: number[] = [];
    const codes: Code[] = [];
    for (let i = 0; i < 22; i++) {
      const s = (await svc.call("counters", [[["key2", v]]])).statuses[0]!;
      rem.push(s.limitRemaining);
      codes.push(s.code);
    }
    expect(rem.slice(0, 20)).to.deep.equal([...Array(20).keys()].map((i) => 19 - i));
    expect(codes.slice(20)).to.deep.equal([Code.OVER_LIMIT, Code.OVER_LIMIT]);
    expect(await svc.stat("ratelimit.service.rate_limit.counters.key2.over_limit")).to.equal(2);
    const r = redis();
    try {
      expect(await r.keys(`${svc.prefix}*`)).to.deep.equal([]);
    } finally {
      r.disconnect();
    }
  });
});
