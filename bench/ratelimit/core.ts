// Where the time of one decision goes, in-process and without gRPC: CPU time per
// decision of protobuf decode + encode alone, and of decode + decision + encode with
// the in-memory store, with Redis (the default: the decisions of a turn on one pooled
// connection, in one write) and with Redis shared (KVSTORE_PIPELINE_WINDOW > 0).
// Compare with the service CPU per request that load.js measures end to end: the
// difference is the gRPC/HTTP2 layer. Prints a table; writes bench/results/ratelimit-core-<time>.json.
//
//   node dist/bench/ratelimit/core.js [--decisions 30000] [--concurrency 32] [--repeats 3]

import { mkdirSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import path from "node:path";
import { pino } from "pino";
import { fromRoot } from "../../common/paths.js";
import { RateLimitRequest, RateLimitResponse } from "../../proto/gen/envoy/service/ratelimit/v3/rls.js";
import { buildConfig } from "../../ratelimit/config/rules.js";
import type { CounterStore } from "../../ratelimit/limiter/counter-store.js";
import { FixedWindowLimiter } from "../../ratelimit/limiter/fixed-window.js";
import { MemoryCounterStore } from "../../ratelimit/memory/counters.js";
import { RedisCounterStore } from "../../ratelimit/redis/counters.js";
import { RateLimitService } from "../../ratelimit/service/service.js";
import { loadSettings } from "../../ratelimit/settings/environment.js";
import { StatsStore } from "../../ratelimit/stats/store.js";

const args = process.argv.slice(2);
const opt = (name: string, def: number) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : def;
};
const DECISIONS = opt("decisions", 30_000);
const CONCURRENCY = opt("concurrency", 32);
const REPEATS = opt("repeats", 3);
const REDIS = process.env.KVSTORE_URL ?? "127.0.0.1:6379";

const config = buildConfig(
  [
    {
      name: "bench.yaml",
      text: "domain: bench\ndescriptors: [{key: k1, rate_limit: {unit: hour, requests_per_unit: 1000000000}}]\n",
    },
  ],
  false,
);
const frames = Array.from({ length: 1000 }, (_, i) =>
  RateLimitRequest.encode({
    domain: "bench",
    hitsAddend: 0,
    descriptors: [{ entries: [{ key: "k1", value: `u${i}` }], limit: undefined, hitsAddend: undefined }],
  }).finish(),
);

async function measure(label: string, one: (i: number) => Promise<void> | void) {
  let i = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (i < DECISIONS) await one(i++);
    }),
  );
  const cpu = process.cpuUsage(cpu0);
  const ms = performance.now() - t0;
  return {
    label,
    decisionsPerSecond: Math.round((DECISIONS / ms) * 1000),
    cpuUsPerDecision: Number(((cpu.user + cpu.system) / DECISIONS).toFixed(1)),
  };
}

async function withStore(label: string, store: CounterStore, window: boolean) {
  const settings = loadSettings({ KVSTORE_URL: REDIS });
  const stats = new StatsStore();
  const limiter = new FixedWindowLimiter(
    store,
    {
      cacheKeyPrefix: `core_${process.pid}:`,
      nearLimitRatio: 0.8,
      expirationJitterMaxSeconds: 300,
      stopCacheKeyIncrementWhenOverlimit: false,
      localCache: undefined,
    },
    stats,
  );
  const service = new RateLimitService(settings, limiter, stats);
  service.setConfig(config);
  if (store instanceof RedisCounterStore) {
    await store.waitReady(5000);
    // waitReady returns with the first ready connection; on a busy machine the other pooled
    // connections may still be connecting, and a decision given one of them fails.
    await new Promise((r) => setTimeout(r, 1000));
  }
  const r = await measure(label, async (i) => {
    const response = await service.shouldRateLimit(RateLimitRequest.decode(frames[i % frames.length]!));
    RateLimitResponse.encode(response).finish();
  });
  await store.close();
  return { ...r, window };
}

async function main() {
  const logger = pino({ level: "silent" });
  const redisStore = (window: boolean) =>
    new RedisCounterStore(
      loadSettings({ KVSTORE_URL: REDIS, KVSTORE_PIPELINE_WINDOW: window ? "150us" : "0" }),
      logger,
    );
  const rows: { label: string; decisionsPerSecond: number; cpuUsPerDecision: number }[] = [];
  const loadBefore = loadavg().map((x) => x.toFixed(2));
  for (let rep = 0; rep < REPEATS; rep++) {
    rows.push(
      await measure("protobuf decode+encode only", (i) => {
        const req = RateLimitRequest.decode(frames[i % frames.length]!);
        RateLimitResponse.encode({
          overallCode: 1,
          statuses: [
            {
              code: 1,
              currentLimit: undefined,
              limitRemaining: req.hitsAddend,
              durationUntilReset: undefined,
              quota: undefined,
            },
          ],
          responseHeadersToAdd: [],
          requestHeadersToAdd: [],
          rawBody: Buffer.alloc(0),
          dynamicMetadata: undefined,
          quota: undefined,
        }).finish();
      }),
    );
    rows.push(await withStore("decision, memory store", new MemoryCounterStore(), false));
    rows.push(await withStore("decision, Redis (default)", redisStore(false), false));
    rows.push(await withStore("decision, Redis (KVSTORE_PIPELINE_WINDOW)", redisStore(true), true));
  }
  const labels = [...new Set(rows.map((r) => r.label))];
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const table = labels.map((label) => {
    const rs = rows.filter((r) => r.label === label);
    return {
      step: label,
      decisionsPerSecond: median(rs.map((r) => r.decisionsPerSecond)),
      cpuUsPerDecision: median(rs.map((r) => r.cpuUsPerDecision)),
    };
  });
  console.log(
    `in-process decision cost, medians of ${REPEATS} runs of ${DECISIONS} decisions at concurrency ${CONCURRENCY}; load average ${loadBefore.join(" ")}`,
  );
  console.table(table);
  const dir = fromRoot("bench", "results");
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `ratelimit-core-${new Date().toISOString().replace(/[:.]/g, "-")}.json`);
  writeFileSync(
    file,
    `${JSON.stringify({ date: new Date().toISOString(), loadAverage: loadBefore, table, runs: rows }, null, 2)}\n`,
  );
  console.log(`results written to ${path.relative(process.cwd(), file)}`);
  process.exit(0);
}

main().catch((err: Error) => {
  console.error(err.message);
  process.exit(1);
});
