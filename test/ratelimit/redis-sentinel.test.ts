// KVSTORE_TYPE=sentinel against a real Sentinel group (master + replica + three
// sentinels with a password): decisions and counters on the master, a forced
// failover the service follows, the cache health component when the master dies,
// and KVSTORE_PERSECOND_TYPE=sentinel for the per-second store.

import type * as grpc from "@grpc/grpc-js";
import { expect } from "chai";
import { RateLimitResponse_Code as Code } from "../../proto/gen/envoy/service/ratelimit/v3/rls.js";
import { redisCommand, SentinelGroup, SingleRedis, waitFor } from "../support/redis-servers.js";
import { RateLimitProcess, RuntimeDir, uniq } from "./harness.js";

const CONFIG = `domain: topo
descriptors:
  - {key: hour, rate_limit: {unit: hour, requests_per_unit: 5}}
  - {key: sec, rate_limit: {unit: second, requests_per_unit: 100}}
`;
const hourStart = () => Math.floor(Date.now() / 1000 / 3600) * 3600;

describe("ratelimit with KVSTORE_TYPE=sentinel", function () {
  this.timeout(60_000);
  let runtime: RuntimeDir;
  let group: SentinelGroup;
  const services: RateLimitProcess[] = [];
  const start = async (env: Record<string, string>) => {
    const p = await RateLimitProcess.start({ runtime, env });
    services.push(p);
    return p;
  };
  const sentinelEnv = () => ({
    KVSTORE_TYPE: "sentinel",
    KVSTORE_URL: group.url,
    KVSTORE_SENTINEL_AUTH: "sentpw",
    KVSTORE_TIMEOUT: "2s",
  });

  before(async () => {
    runtime = new RuntimeDir({ "topo.yaml": CONFIG });
    group = await SentinelGroup.start({ sentinelPassword: "sentpw" });
  });
  after(async () => {
    await Promise.all(services.map((s) => s.stop()));
    await group?.stop();
    runtime?.cleanup();
  });

  it("counts on the master the sentinels name and answers OVER_LIMIT past the limit", async () => {
    const svc = await start(sentinelEnv());
    const v = uniq();
    const remaining: number[] = [];
    for (let i = 0; i < 6; i++)
      remaining.push((await svc.call("topo", [[["hour", v]]])).statuses[0]!.limitRemaining);
    expect(remaining).to.deep.equal([4, 3, 2, 1, 0, 0]);
    expect((await svc.call("topo", [[["hour", v]]])).overallCode).to.equal(Code.OVER_LIMIT);
    const key = `${svc.prefix}topo_hour_${v}_${hourStart()}`;
    expect(await redisCommand(await group.masterPort(), ["GET", key])).to.equal("7");
  });

  it("without the sentinels' password (KVSTORE_SENTINEL_AUTH) decisions fail with the store named", async () => {
    const env: Record<string, string> = {
      ...sentinelEnv(),
      KVSTORE_SENTINEL_AUTH: "wrong",
      KVSTORE_TIMEOUT: "1s",
    };
    const svc = await start(env);
    const err = await svc.call("topo", [[["hour", uniq()]]]).then(
      () => undefined,
      (e: grpc.ServiceError) => e,
    );
    expect(err?.details).to.match(/^redis sentinel rlmaster \(127\.0\.0\.1:\d+,/);
    expect(svc.child.exitCode).to.equal(null);
  });

  it("follows a failover (SENTINEL FAILOVER): counting goes on on the new master", async () => {
    const svc = await start(sentinelEnv());
    const v = uniq();
    for (let i = 0; i < 2; i++) await svc.call("topo", [[["hour", v]]]);
    const oldMaster = await group.masterPort();
    await group.failover();
    const newMaster = await group.masterPort();
    expect(newMaster).to.not.equal(oldMaster);
    // The first calls after the switch may still meet the old connection; then they succeed.
    await svc.until("a decision on the new master", async () => {
      const s = (await svc.call("topo", [[["hour", uniq()]]])).overallCode;
      return s === Code.OK;
    });
    const s = (await svc.call("topo", [[["hour", v]]])).statuses[0]!;
    expect(s.limitRemaining).to.equal(2); // 2 before the failover (replicated) + this one
    expect(await redisCommand(newMaster, ["GET", `${svc.prefix}topo_hour_${v}_${hourStart()}`])).to.equal(
      "3",
    );
  });

  it("KVSTORE_HEALTH_CHECK_ACTIVE_CONNECTION: unhealthy when the master dies, healthy after the automatic failover", async () => {
    // The demoted master must be replicating from the current one before it can be promoted.
    await waitFor(
      "both data nodes to be in sync",
      async () => {
        const master = await group.masterPort();
        const other = [group.master, group.replica].find((s) => s.port !== master)!;
        const info = String(await redisCommand(other.port, ["INFO", "replication"]));
        return info.includes("role:slave") && info.includes("master_link_status:up");
      },
      20_000,
    );
    const svc = await start({ ...sentinelEnv(), KVSTORE_HEALTH_CHECK_ACTIVE_CONNECTION: "true" });
    expect((await fetch(`${svc.httpUrl}/healthcheck`)).status).to.equal(200);
    const master = await group.masterPort();
    await [group.master, group.replica].find((s) => s.port === master)!.kill();
    await svc.until("the cache health component to fail", async () => {
      const res = await fetch(`${svc.httpUrl}/healthcheck`);
      return res.status === 500 && (await res.text()).includes("cache: no active connection");
    });
    // Redis's own part first (slower on a loaded machine), so a failure names whose part failed.
    await waitFor(
      "the sentinels to promote the replica",
      async () => (await group.masterPort()) !== master,
      60_000,
    );
    await svc.until(
      "healthy again after the sentinels promoted the replica",
      async () => (await fetch(`${svc.httpUrl}/healthcheck`)).status === 200,
      30_000,
    );
    await svc.until(
      "a decision on the promoted master",
      async () => (await svc.call("topo", [[["hour", uniq()]]])).overallCode === Code.OK,
    );
  });
});

describe("ratelimit with KVSTORE_PERSECOND_TYPE=sentinel", function () {
  this.timeout(60_000);
  let runtime: RuntimeDir;
  let group: SentinelGroup;
  let main: SingleRedis;
  let svc: RateLimitProcess | undefined;

  before(async () => {
    runtime = new RuntimeDir({ "topo.yaml": CONFIG });
    [group, main] = await Promise.all([SentinelGroup.start(), SingleRedis.start()]);
  });
  after(async () => {
    await svc?.stop();
    await Promise.all([group?.stop(), main?.stop()]);
    runtime?.cleanup();
  });

  it("sends only SECOND windows to the per-second Sentinel group", async () => {
    svc = await RateLimitProcess.start({
      runtime,
      env: {
        KVSTORE_URL: main.url,
        KVSTORE_PERSECOND: "true",
        KVSTORE_PERSECOND_TYPE: "sentinel",
        KVSTORE_PERSECOND_URL: group.url,
      },
    });
    const v = uniq();
    const res = await svc.call("topo", [[["sec", v]], [["hour", v]]]);
    expect(res.statuses.map((s) => s.limitRemaining)).to.deep.equal([99, 4]);
    const pattern = `${svc.prefix}*`;
    const onSentinel = (await redisCommand(await group.masterPort(), ["KEYS", pattern])) as string[];
    const onMain = (await redisCommand(main.server.port, ["KEYS", pattern])) as string[];
    expect(onSentinel).to.have.length(1);
    expect(onSentinel[0]).to.match(new RegExp(`topo_sec_${v}_\\d+$`));
    expect(onMain).to.deep.equal([`${svc.prefix}topo_hour_${v}_${hourStart()}`]);
  });
});
