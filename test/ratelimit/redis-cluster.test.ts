// KVSTORE_TYPE=cluster against a real three-master Redis Cluster: each counter on the
// node that owns its slot, exact counting with KVSTORE_PIPELINE_WINDOW and
// KVSTORE_CLUSTER_PIPELINE_PARALLELISM, the per-second store as a cluster, and the
// cache health component when a master dies and comes back.

import { expect } from "chai";
import { RateLimitResponse_Code as Code } from "../../proto/gen/envoy/service/ratelimit/v3/rls.js";
import { clusterParallelism } from "../../ratelimit/redis/counters.js";
import { loadSettings } from "../../ratelimit/settings/environment.js";
import { RedisClusterGroup, redisCommand } from "../support/redis-servers.js";
import { RateLimitProcess, REDIS_URL, RuntimeDir, uniq } from "./harness.js";

const CONFIG = `domain: topo
descriptors:
  - {key: k1, rate_limit: {unit: hour, requests_per_unit: 5}}
  - {key: k2, rate_limit: {unit: hour, requests_per_unit: 50}}
  - {key: k3, rate_limit: {unit: hour, requests_per_unit: 50}}
  - {key: k4, rate_limit: {unit: hour, requests_per_unit: 50}}
  - {key: k5, rate_limit: {unit: hour, requests_per_unit: 50}}
  - {key: sec, rate_limit: {unit: second, requests_per_unit: 100}}
`;
const hourStart = () => Math.floor(Date.now() / 1000 / 3600) * 3600;

describe("ratelimit with KVSTORE_TYPE=cluster", function () {
  this.timeout(60_000);
  let runtime: RuntimeDir;
  let cluster: RedisClusterGroup;
  const services: RateLimitProcess[] = [];
  const start = async (env: Record<string, string>) => {
    const p = await RateLimitProcess.start({
      runtime,
      env: { KVSTORE_TYPE: "cluster", KVSTORE_URL: cluster.url, KVSTORE_TIMEOUT: "2s", ...env },
    });
    services.push(p);
    return p;
  };

  before(async () => {
    runtime = new RuntimeDir({ "topo.yaml": CONFIG });
    cluster = await RedisClusterGroup.start(3);
  });
  after(async () => {
    await Promise.all(services.map((s) => s.stop()));
    await cluster?.stop();
    runtime?.cleanup();
  });

  it("keeps each counter on the node owning its slot and answers OVER_LIMIT past the limit", async () => {
    const svc = await start({});
    const v = uniq();
    const descriptors = ["k1", "k2", "k3", "k4", "k5"].map((k) => [[k, v]] as [string, string][]);
    const first = await svc.call("topo", descriptors);
    expect(first.statuses.map((s) => s.limitRemaining)).to.deep.equal([4, 49, 49, 49, 49]);
    const owners = new Set<number>();
    for (const k of ["k1", "k2", "k3", "k4", "k5"]) {
      const key = `${svc.prefix}topo_${k}_${v}_${hourStart()}`;
      const node = await cluster.nodeOf(key);
      owners.add(node.port);
      expect(await redisCommand(node.port, ["GET", key]), key).to.equal("1");
      expect(await redisCommand(node.port, ["TTL", key])).to.be.within(3590, 3600);
    }
    // The test is meaningful only when the keys are spread (they almost always are).
    expect(owners.size).to.be.greaterThan(1);
    const codes: Code[] = [];
    for (let i = 0; i < 5; i++) codes.push((await svc.call("topo", [[["k1", v]]])).overallCode);
    expect(codes).to.deep.equal([Code.OK, Code.OK, Code.OK, Code.OK, Code.OVER_LIMIT]);
  });

  for (const [window, parallelism] of [
    ["0", "1"],
    ["150us", "0"],
    ["150us", "3"],
  ] as const) {
    it(`counts exactly with KVSTORE_PIPELINE_WINDOW=${window} and KVSTORE_CLUSTER_PIPELINE_PARALLELISM=${parallelism}`, async () => {
      const svc = await start({
        KVSTORE_PIPELINE_WINDOW: window,
        KVSTORE_CLUSTER_PIPELINE_PARALLELISM: parallelism,
        KVSTORE_POOL_SIZE: "3",
      });
      const v = uniq();
      const results = await Promise.all(
        Array.from({ length: 20 }, () =>
          svc.call("topo", [[["k2", v]], [["k3", v]], [["k4", v]], [["k5", v]]]),
        ),
      );
      for (let d = 0; d < 4; d++) {
        const rem = results.map((r) => r.statuses[d]!.limitRemaining).sort((a, b) => a - b);
        expect(rem).to.deep.equal(Array.from({ length: 20 }, (_, i) => 30 + i));
      }
      for (const k of ["k2", "k3", "k4", "k5"]) {
        const key = `${svc.prefix}topo_${k}_${v}_${hourStart()}`;
        expect(await redisCommand((await cluster.nodeOf(key)).port, ["GET", key])).to.equal("20");
      }
    });
  }

  it("KVSTORE_PERSECOND_TYPE=cluster takes only the SECOND windows", async () => {
    const svc = await RateLimitProcess.start({
      runtime,
      env: {
        KVSTORE_URL: REDIS_URL,
        KVSTORE_PERSECOND: "true",
        KVSTORE_PERSECOND_TYPE: "cluster",
        KVSTORE_PERSECOND_URL: cluster.url,
      },
    });
    services.push(svc);
    const v = uniq();
    const res = await svc.call("topo", [[["sec", v]], [["k2", v]]]);
    expect(res.statuses.map((s) => s.limitRemaining)).to.deep.equal([99, 49]);
    const onCluster: string[] = [];
    for (const n of cluster.nodes)
      onCluster.push(...((await redisCommand(n.port, ["KEYS", `${svc.prefix}*`])) as string[]));
    expect(onCluster).to.have.length(1);
    expect(onCluster[0]).to.match(new RegExp(`topo_sec_${v}_\\d+$`));
    const [host, port] = REDIS_URL.split(":") as [string, string];
    expect(host).to.equal("127.0.0.1");
    expect(await redisCommand(Number(port), ["GET", `${svc.prefix}topo_k2_${v}_${hourStart()}`])).to.equal(
      "1",
    );
    expect(await redisCommand(Number(port), ["KEYS", `${svc.prefix}topo_sec_*`])).to.deep.equal([]);
  });

  it("KVSTORE_HEALTH_CHECK_ACTIVE_CONNECTION: unhealthy while a master is down, healthy when it is back", async () => {
    const svc = await start({ KVSTORE_HEALTH_CHECK_ACTIVE_CONNECTION: "true" });
    // Touch every node so the cluster client has a connection to each.
    await svc.call(
      "topo",
      ["k2", "k3", "k4", "k5"].map((k) => [[k, uniq()]] as [string, string][]),
    );
    expect((await fetch(`${svc.httpUrl}/healthcheck`)).status).to.equal(200);
    const victim = cluster.nodes[1]!;
    await victim.kill();
    await svc.until("the cache health component to fail", async () => {
      const res = await fetch(`${svc.httpUrl}/healthcheck`);
      return res.status === 500 && (await res.text()).includes("cache: no active connection");
    });
    expect(svc.child.exitCode).to.equal(null);
    await victim.start();
    await svc.until(
      "healthy again",
      async () => (await fetch(`${svc.httpUrl}/healthcheck`)).status === 200,
      30_000,
    );
  });
});

describe("ratelimit cluster settings", () => {
  it("KVSTORE_CLUSTER_PIPELINE_PARALLELISM: default 1, 0 means the pool size, capped at the pool size", () => {
    const base = { KVSTORE_URL: "127.0.0.1:7000", KVSTORE_TYPE: "cluster", KVSTORE_POOL_SIZE: "4" };
    const p = (v?: string) =>
      clusterParallelism(
        loadSettings({ ...base, ...(v === undefined ? {} : { KVSTORE_CLUSTER_PIPELINE_PARALLELISM: v }) })
          .kvstore,
      );
    expect([p(), p("0"), p("2"), p("9")]).to.deep.equal([1, 4, 2, 4]);
  });
});
