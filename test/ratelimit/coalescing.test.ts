// Coalesced increments of a hot key (ratelimit/limiter/coalescing-store.ts) on a private Redis:
// a burst of calls on one limit gives exactly what serial increments would (each count
// once, the limit cut at the same call) with far fewer INCRBY commands, a queued batch
// takes in what arrives in the turn its key's reply came back in and in the next, the
// batches of a turn share one connection while each keeps its own failure, and a Redis
// failure fails the waiting calls without leaving the key stuck.

import { expect } from "chai";
import { Redis } from "ioredis";
import { pino } from "pino";
import { RateLimitResponse_Code as Code } from "../../proto/gen/envoy/service/ratelimit/v3/rls.js";
import { CoalescingCounterStore } from "../../ratelimit/limiter/coalescing-store.js";
import { RedisCounterStore } from "../../ratelimit/redis/counters.js";
import { loadSettings } from "../../ratelimit/settings/environment.js";
import { SingleRedis } from "../support/redis-servers.js";
import { RateLimitProcess, RuntimeDir, uniq } from "./harness.js";

const CONFIG = `domain: hot
descriptors:
  - {key: route, rate_limit: {unit: hour, requests_per_unit: 150}}
`;

describe("ratelimit coalesces increments of a hot key", function () {
  this.timeout(60_000);
  let redis: SingleRedis;
  let runtime: RuntimeDir;
  let svc: RateLimitProcess;
  let admin: Redis;

  before(async () => {
    redis = await SingleRedis.start();
    runtime = new RuntimeDir({ "hot.yaml": CONFIG });
    svc = await RateLimitProcess.start({ runtime, env: { KVSTORE_URL: redis.url, KVSTORE_TIMEOUT: "1s" } });
    admin = new Redis(redis.server.port, "127.0.0.1");
  });
  after(async () => {
    await svc?.stop();
    admin?.disconnect();
    await redis?.stop();
    runtime?.cleanup();
  });

  const incrbyCalls = async () => {
    const info = await admin.info("commandstats");
    return Number(/cmdstat_incrby:calls=(\d+)/.exec(info)?.[1] ?? 0);
  };

  it("answers a burst on one key as serial increments would, with fewer INCRBYs", async () => {
    const value = uniq();
    const before = await incrbyCalls();
    const answers = await Promise.all(
      Array.from({ length: 200 }, () => svc.call("hot", [[["route", value]]])),
    );
    const sent = (await incrbyCalls()) - before;
    const ok = answers.filter((a) => a.overallCode === Code.OK);
    expect(ok).to.have.length(150);
    expect(answers.filter((a) => a.overallCode === Code.OVER_LIMIT)).to.have.length(50);
    // Every count from 1 to 150 was handed out once: limitRemaining 149 … 0.
    const remaining = ok.map((a) => a.statuses[0]!.limitRemaining).sort((x, y) => x - y);
    expect(remaining).to.deep.equal(Array.from({ length: 150 }, (_, i) => i));
    expect(sent, "INCRBY commands for 200 calls").to.be.below(200);
    console.log(`      200 calls on one key: ${sent} INCRBY commands`);
  });

  it("counts one key named twice in a request twice, in order", async () => {
    const value = uniq();
    const res = await svc.call("hot", [[["route", value]], [["route", value]]]);
    expect(res.statuses.map((s) => s.limitRemaining)).to.deep.equal([149, 148]);
  });

  it("sends a queued batch a turn after the reply, with what arrived during both turns", async () => {
    // In-process, on the same Redis: calls that arrive in the turn in which the key's reply
    // came back (here: issued when the first call resolves) and in the next one (issued from
    // a setImmediate of that turn) join the batch that queued up meanwhile instead of waiting
    // a round trip for a batch of their own.
    const redisStore = new RedisCounterStore(
      loadSettings({ KVSTORE_URL: redis.url }),
      pino({ level: "silent" }),
    );
    const store = new CoalescingCounterStore(redisStore);
    try {
      expect(await redisStore.waitReady(5_000), "connected to Redis").to.equal(true);
      const op = { key: `coalesce_${uniq()}`, addend: 1, expireSeconds: 60, perSecond: false };
      const before = await incrbyCalls();
      let third: Promise<number[]> | undefined;
      let fourth: Promise<number[]> | undefined;
      const first = store.increment([op]);
      const nextTurn = new Promise<void>((resolve) => {
        void first.then(() => {
          third = store.increment([op]);
          setImmediate(() => {
            fourth = store.increment([op]);
            resolve();
          });
        });
      });
      const second = store.increment([op]);
      await nextTurn;
      expect([await first, await second, await third, await fourth]).to.deep.equal([[1], [2], [3], [4]]);
      expect((await incrbyCalls()) - before, "INCRBY commands for the four calls").to.equal(2);
    } finally {
      await store.close();
    }
  });

  it("sends the batches of hot keys that leave in one turn on one connection, each with its own failure", async () => {
    // Three keys in flight together (one call), a call queued on each, one key holding text
    // (INCRBY fails there): the three batches leave in the same turn. MONITOR shows where
    // each INCRBY came from: all three on one connection. The text key's call fails alone.
    // At the end, all three of the pool's connections are idle again.
    const redisStore = new RedisCounterStore(
      loadSettings({ KVSTORE_URL: redis.url, KVSTORE_POOL_SIZE: "3" }),
      pino({ level: "silent" }),
    );
    const store = new CoalescingCounterStore(redisStore);
    const watcher = new Redis(redis.server.port, "127.0.0.1");
    let monitor: Redis | undefined;
    try {
      expect(await redisStore.waitReady(5_000), "connected to Redis").to.equal(true);
      const id = uniq();
      const op = (name: string) => ({
        key: `together_${id}_${name}`,
        addend: 1,
        expireSeconds: 60,
        perSecond: false,
      });
      const [a, b, text] = [op("a"), op("b"), op("text")];
      await admin.set(text.key, "not a number");
      const seen: { key: string; from: string }[] = [];
      monitor = await watcher.monitor();
      monitor.on("monitor", (_time: string, args: string[], source: string) => {
        if (args[0]?.toLowerCase() === "incrby" && args[1]?.startsWith(`together_${id}_`))
          seen.push({ key: args[1], from: source });
      });

      const first = store.increment([a, b, text]).catch((err: Error) => err);
      const queued = [a, b, text].map((o) => store.increment([o]).catch((err: Error) => err));
      expect(await first).to.be.instanceOf(Error);
      const [qa, qb, qtext] = await Promise.all(queued);
      expect(qa).to.deep.equal([2]);
      expect(qb).to.deep.equal([2]);
      expect(qtext).to.be.instanceOf(Error);
      expect((qtext as Error).message).to.match(/not an integer/);

      const deadline = Date.now() + 5_000;
      while (seen.length < 6 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(seen.map((s) => s.key)).to.have.length(6);
      const batches = seen.slice(3);
      expect(new Set(batches.map((s) => s.key)).size, "the batches' keys").to.equal(3);
      expect(new Set(batches.map((s) => s.from)), "connections of the three batches").to.have.property(
        "size",
        1,
      );

      // Every connection is back in the pool: the one the batches shared too.
      const pool = redisStore.main as unknown as { idle: unknown[] };
      expect(pool.idle, "idle connections once all is settled").to.have.length(3);
    } finally {
      monitor?.disconnect();
      watcher.disconnect();
      await store.close();
    }
  });

  it("fails the waiting calls when Redis fails, and the key works again once it is back", async () => {
    const value = uniq();
    await redis.server.kill();
    const failed = await Promise.all(
      Array.from({ length: 20 }, () =>
        svc.call("hot", [[["route", value]]]).then(
          () => false,
          () => true,
        ),
      ),
    );
    expect(failed.every(Boolean)).to.equal(true);
    await redis.server.start();
    await svc.until(
      "decisions to work again",
      async () => (await svc.call("hot", [[["route", value]]])).overallCode === Code.OK,
      15_000,
    );
    const again = await Promise.all(Array.from({ length: 10 }, () => svc.call("hot", [[["route", value]]])));
    expect(again.every((a) => a.overallCode === Code.OK)).to.equal(true);
  });
});
