// BACKEND_TYPE=objcache against three private memcached servers: decisions and
// over-limit, each key on the node the rendezvous hash names whatever the order of
// OBJCACHE_HOST_PORT, a dead node failing only its keys with the node named, the
// key rules (250 bytes, no whitespace/control characters), OBJCACHE_MAX_IDLE_CONNS,
// OBJCACHE_SRV with refresh through a local DNS server, OBJCACHE_TLS, and settings.

import { promises as dns } from "node:dns";
import * as grpc from "@grpc/grpc-js";
import { expect } from "chai";
import {
  RateLimitResponse_Code as Code,
  RateLimitServiceClient,
} from "../../proto/gen/envoy/service/ratelimit/v3/rls.js";
import { createServiceLogger } from "../../ratelimit/log.js";
import type { MemcacheCounterStore } from "../../ratelimit/memcached/counters.js";
import { pickNode } from "../../ratelimit/memcached/ring.js";
import { startService } from "../../ratelimit/runner.js";
import { loadSettings, type SettingsError } from "../../ratelimit/settings/environment.js";
import { SrvDnsServer } from "../support/dns-server.js";
import { MemcachedServer, startMemcached } from "../support/memcached.js";
import { runCommand } from "../support/process.js";
import { TestPki } from "./certs.js";
import { callGrpc, pause, RateLimitProcess, RuntimeDir, request, uniq } from "./harness.js";

const CONFIG = `domain: mc
descriptors:
  - {key: hour, rate_limit: {unit: hour, requests_per_unit: 5}}
  - {key: big, rate_limit: {unit: hour, requests_per_unit: 1000}}
  - {key: any, rate_limit: {unit: minute, requests_per_unit: 1000}}
`;
const hourStart = () => Math.floor(Date.now() / 1000 / 3600) * 3600;

/** Polls a node until `key` has `value` (increments run after the answer). */
async function valueOn(node: MemcachedServer, key: string, value: string): Promise<void> {
  const deadline = Date.now() + 5000;
  let last: string | undefined;
  while (Date.now() < deadline) {
    last = await node.get(key);
    if (last === value) return;
    await pause(20);
  }
  throw new Error(`${key} on ${node.address} is ${last}, expected ${value}`);
}

describe("ratelimit with the memcached backend", function () {
  this.timeout(60_000);
  let runtime: RuntimeDir;
  let nodes: MemcachedServer[] = [];
  const services: RateLimitProcess[] = [];
  const start = async (env: Record<string, string> = {}) => {
    const p = await RateLimitProcess.start({
      runtime,
      env: { BACKEND_TYPE: "objcache", OBJCACHE_HOST_PORT: nodes.map((n) => n.address).join(","), ...env },
    });
    services.push(p);
    return p;
  };

  before(async () => {
    runtime = new RuntimeDir({ "mc.yaml": CONFIG });
    nodes = await startMemcached(3);
  });
  after(async () => {
    await Promise.all(services.map((s) => s.stop()));
    await Promise.all(nodes.map((n) => n.kill()));
    runtime?.cleanup();
  });

  it("counts with add-then-incr and answers OVER_LIMIT past the limit", async () => {
    const svc = await start();
    const v = uniq();
    const key = `${svc.prefix}mc_hour_${v}_${hourStart()}`;
    const node =
      nodes[
        pickNode(
          key,
          nodes.map((n) => n.address),
        )
      ]!;
    const seen: [Code, number][] = [];
    for (let i = 0; i < 7; i++) {
      const s = (await svc.call("mc", [[["hour", v]]])).statuses[0]!;
      seen.push([s.code, s.limitRemaining]);
      await valueOn(node, key, String(i + 1));
    }
    expect(seen).to.deep.equal([
      [Code.OK, 4],
      [Code.OK, 3],
      [Code.OK, 2],
      [Code.OK, 1],
      [Code.OK, 0],
      [Code.OVER_LIMIT, 0],
      [Code.OVER_LIMIT, 0],
    ]);
    expect(await svc.stat("ratelimit.service.rate_limit.mc.hour.over_limit")).to.equal(2);
  });

  it("puts each key on the node the hash names, the same for any order of OBJCACHE_HOST_PORT", async () => {
    const a = await start();
    const reversed = nodes.map((n) => n.address).reverse();
    const b = await start({ OBJCACHE_HOST_PORT: reversed.join(" , "), CACHE_KEY_PREFIX: a.prefix });
    const used = new Set<number>();
    for (let i = 0; i < 24; i++) {
      const v = uniq();
      const key = `${a.prefix}mc_big_${v}_${hourStart()}`;
      const owner = pickNode(
        key,
        nodes.map((n) => n.address),
      );
      expect(pickNode(key, reversed)).to.equal(nodes.length - 1 - owner);
      used.add(owner);
      await a.call("mc", [{ entries: [["big", v]], hitsAddend: 3n }]);
      await valueOn(nodes[owner]!, key, "3");
      // The other instance, given the nodes in another order, reads and counts the same key.
      const s = (await b.call("mc", [[["big", v]]])).statuses[0]!;
      expect(s.limitRemaining).to.equal(996);
      await valueOn(nodes[owner]!, key, "4");
      for (const [j, n] of nodes.entries()) if (j !== owner) expect(await n.get(key)).to.equal(undefined);
    }
    expect(used.size).to.equal(3);
  });

  it("a request with a key over 250 bytes or with whitespace fails with a clear error and counts nothing", async () => {
    const svc = await start();
    const long = "x".repeat(260);
    const err = await svc.call("mc", [[["any", long]]]).then(
      () => undefined,
      (e: grpc.ServiceError) => e,
    );
    expect(err?.code).to.equal(grpc.status.UNKNOWN);
    expect(err?.details).to.match(/^cache key ".*…" is \d+ bytes long; memcached keys are limited to 250/);
    const spaced = await svc.call("mc", [[["any", "two words"]], [["hour", uniq()]]]).then(
      () => undefined,
      (e: grpc.ServiceError) => e,
    );
    expect(spaced?.details).to.include("contains whitespace or a control character (U+0020 at index");
    const json = await svc.json({
      domain: "mc",
      descriptors: [{ entries: [{ key: "any", value: "tab\there" }] }],
    });
    expect(json.status).to.equal(400);
    expect(json.body).to.include("U+0009");
    expect(await svc.stat("ratelimit.service.call.should_rate_limit.service_error")).to.equal(3);
    // Right at the limit is fine.
    const prefixLen = `${svc.prefix}mc_any_`.length + `_${Math.floor(Date.now() / 60_000) * 60}`.length;
    const fits = "y".repeat(250 - prefixLen);
    expect((await svc.call("mc", [[["any", fits]]])).statuses[0]!.limitRemaining).to.equal(999);
  });

  it("OBJCACHE_MAX_IDLE_CONNS bounds the connections kept open per node", async () => {
    const node = await MemcachedServer.start();
    try {
      const base = (await node.stats()).curr_connections!;
      const svc = await start({ OBJCACHE_HOST_PORT: node.address, OBJCACHE_MAX_IDLE_CONNS: "1" });
      await Promise.all(Array.from({ length: 30 }, () => svc.call("mc", [[["big", uniq()]]])));
      await pause(300);
      // `base` counted our stats connection; each stats call opens one again.
      expect((await node.stats()).curr_connections! - base).to.equal(1);
    } finally {
      await node.kill();
    }
  });

  it("a dead node fails only the decisions whose keys it holds, naming it; the service stays up", async () => {
    const svc = await start({ KVSTORE_HEALTH_CHECK_ACTIVE_CONNECTION: "true" });
    const addresses = nodes.map((n) => n.address);
    const victim = 2;
    const valueFor = (want: boolean) => {
      for (;;) {
        const v = uniq();
        if ((pickNode(`${svc.prefix}mc_big_${v}_${hourStart()}`, addresses) === victim) === want) return v;
      }
    };
    await nodes[victim]!.kill();
    const err = await svc.call("mc", [[["big", valueFor(true)]]]).then(
      () => undefined,
      (e: grpc.ServiceError) => e,
    );
    expect(err?.code).to.equal(grpc.status.UNKNOWN);
    expect(err?.details).to.match(new RegExp(`^memcache ${nodes[victim]!.address}: .*ECONNREFUSED`));
    expect((await svc.call("mc", [[["big", valueFor(false)]]])).overallCode).to.equal(Code.OK);
    expect(await svc.stat("ratelimit.service.call.should_rate_limit.redis_error")).to.equal(1);
    expect((await fetch(`${svc.httpUrl}/healthcheck`)).status).to.equal(200);
    expect(svc.child.exitCode).to.equal(null);
    await nodes[victim]!.start();
    expect((await svc.call("mc", [[["big", valueFor(true)]]])).overallCode).to.equal(Code.OK);
  });
});

describe("ratelimit memcached servers from OBJCACHE_SRV", function () {
  this.timeout(60_000);
  let runtime: RuntimeDir;
  let nodes: MemcachedServer[] = [];
  let dnsServer: SrvDnsServer;

  before(async () => {
    runtime = new RuntimeDir({ "mc.yaml": CONFIG });
    nodes = await startMemcached(3);
    dnsServer = await SrvDnsServer.start();
  });
  after(async () => {
    await Promise.all(nodes.map((n) => n.kill()));
    await dnsServer?.stop();
    runtime?.cleanup();
  });

  it("looks the servers up at start and follows the record every OBJCACHE_SRV_REFRESH", async () => {
    const name = "_memcache._tcp.rl.test";
    // Targets are dotted-quad names, so connecting needs no other DNS records.
    const answer = (ns: MemcachedServer[]) =>
      dnsServer.records.set(
        name,
        ns.map((n) => ({ port: n.port, target: "127.0.0.1" })),
      );
    answer([nodes[1]!, nodes[0]!]);
    const resolver = new dns.Resolver();
    resolver.setServers([dnsServer.address]);
    const settings = loadSettings({
      RUNTIME_ROOT: runtime.root,
      RUNTIME_WATCH_ROOT: "false",
      HOST: "127.0.0.1",
      PORT: "0",
      GRPC_HOST: "127.0.0.1",
      GRPC_PORT: "0",
      DEBUG_HOST: "127.0.0.1",
      DEBUG_PORT: "0",
      LOG_LEVEL: "error",
      EXPIRATION_JITTER_MAX_SECONDS: "0",
      BACKEND_TYPE: "objcache",
      OBJCACHE_SRV: name,
      OBJCACHE_SRV_REFRESH: "200ms",
    });
    const running = await startService(settings, createServiceLogger(settings), {
      resolveSrv: (n) => resolver.resolveSrv(n),
    });
    const client = new RateLimitServiceClient(running.grpc.address, grpc.credentials.createInsecure());
    try {
      const store = running.store as MemcacheCounterStore;
      expect(store.servers).to.deep.equal([nodes[0]!.address, nodes[1]!.address].sort());
      const v = uniq();
      const res = await callGrpc(client, request("mc", [[["big", v]]]));
      expect(res.statuses[0]!.limitRemaining).to.equal(999);
      await store.flush();
      const key = `mc_big_${v}_${hourStart()}`;
      const holders = [];
      for (const n of nodes) if ((await n.get(key)) === "1") holders.push(n.address);
      expect(holders).to.deep.equal([store.servers[pickNode(key, store.servers)]]);

      answer([nodes[2]!]);
      const deadline = Date.now() + 5000;
      while (store.servers.join() !== nodes[2]!.address && Date.now() < deadline) await pause(50);
      expect(store.servers).to.deep.equal([nodes[2]!.address]);
      const w = uniq();
      await callGrpc(client, request("mc", [[["big", w]]]));
      await store.flush();
      expect(await nodes[2]!.get(`mc_big_${w}_${hourStart()}`)).to.equal("1");

      // A failing lookup keeps the last list.
      dnsServer.records.delete(name);
      const queries = dnsServer.queries;
      while (dnsServer.queries < queries + 2) await pause(50);
      expect(store.servers).to.deep.equal([nodes[2]!.address]);
    } finally {
      client.close();
      await running.stop(1000);
    }
  });

  it("the command stops with a clear error when the SRV name cannot be resolved", async () => {
    const out = await runCommand("ratelimit", [], {
      RUNTIME_ROOT: runtime.root,
      PORT: "0",
      GRPC_PORT: "0",
      DEBUG_PORT: "0",
      BACKEND_TYPE: "objcache",
      OBJCACHE_SRV: "_memcache._tcp.does-not-exist.invalid",
    });
    expect(out.code).to.equal(1);
    expect(out.stderr).to.include("OBJCACHE_SRV=_memcache._tcp.does-not-exist.invalid: SRV lookup failed");
  });
});

describe("ratelimit memcached over TLS (OBJCACHE_TLS)", function () {
  this.timeout(60_000);
  let runtime: RuntimeDir;
  let node: MemcachedServer | undefined;
  const services: RateLimitProcess[] = [];
  let pki: TestPki | undefined;

  before(() => {
    runtime = new RuntimeDir({ "mc.yaml": CONFIG });
  });
  after(async () => {
    pki?.cleanup();
    await Promise.all(services.map((s) => s.stop()));
    await node?.kill();
    runtime?.cleanup();
  });

  it("connects with OBJCACHE_TLS_CACERT and refuses an untrusted server", async () => {
    pki = new TestPki("rl-mc-ca");
    const server = pki.issue("localhost", "DNS:localhost,IP:127.0.0.1", "serverAuth");
    node = await MemcachedServer.start(["-Z", "-o", `ssl_chain_cert=${server.cert},ssl_key=${server.key}`]);
    const env = { BACKEND_TYPE: "objcache", OBJCACHE_HOST_PORT: node.address, OBJCACHE_TLS: "true" };
    const trusted = await RateLimitProcess.start({
      runtime,
      env: { ...env, OBJCACHE_TLS_CACERT: pki.ca.cert },
    });
    services.push(trusted);
    const v = uniq();
    expect((await trusted.call("mc", [[["hour", v]]])).statuses[0]!.limitRemaining).to.equal(4);
    await pause(100);
    expect((await trusted.call("mc", [[["hour", v]]])).statuses[0]!.limitRemaining).to.equal(3);
    const untrusted = await RateLimitProcess.start({ runtime, env });
    services.push(untrusted);
    const err = await untrusted.call("mc", [[["hour", uniq()]]]).then(
      () => undefined,
      (e: grpc.ServiceError) => e,
    );
    expect(err?.details).to.match(new RegExp(`^memcache ${node.address}: .*certificate`));
  });
});

describe("ratelimit memcached settings", () => {
  const problems = (env: Record<string, string>) => {
    try {
      loadSettings(env);
      return "";
    } catch (err) {
      return (err as SettingsError).problems.join("\n");
    }
  };

  it("has the spec's defaults and accepts objcache and memcache", () => {
    const s = loadSettings({ BACKEND_TYPE: "objcache", OBJCACHE_HOST_PORT: "a:1,b:2" });
    expect(s.backendType).to.equal("memcache");
    expect(s.objcache).to.deep.equal({
      hostPorts: ["a:1", "b:2"],
      srv: "",
      srvRefreshMs: 0,
      maxIdleConns: 2,
      tls: false,
      tlsClientCert: "",
      tlsClientKey: "",
      tlsCaCert: "",
      tlsSkipHostnameVerification: false,
    });
    const legacy = loadSettings({
      BACKEND_TYPE: "memcache",
      MEMCACHE_SRV: "_m._tcp.x",
      MEMCACHE_SRV_REFRESH: "1m",
    });
    expect([legacy.backendType, legacy.objcache.srv, legacy.objcache.srvRefreshMs]).to.deep.equal([
      "memcache",
      "_m._tcp.x",
      60_000,
    ]);
    expect(
      loadSettings({ BACKEND_TYPE: "objcache", OBJCACHE_HOST_PORT: "a:1", OBJCACHE_MAX_IDLE_CONNS: "0" })
        .objcache.maxIdleConns,
    ).to.equal(2);
  });

  it("names each bad OBJCACHE_ value", () => {
    expect(problems({ BACKEND_TYPE: "objcache" })).to.include(
      "OBJCACHE_HOST_PORT or OBJCACHE_SRV: one is required",
    );
    expect(
      problems({ BACKEND_TYPE: "objcache", OBJCACHE_HOST_PORT: "a:1", OBJCACHE_SRV: "_m._tcp.x" }),
    ).to.include("set only one of them");
    expect(problems({ BACKEND_TYPE: "objcache", OBJCACHE_HOST_PORT: "a:1,nohost" })).to.include(
      'OBJCACHE_HOST_PORT="a:1,nohost": expected comma-separated host:port ("nohost" is not host:port)',
    );
    const p = problems({
      BACKEND_TYPE: "objcache",
      OBJCACHE_SRV: "_m._tcp.x",
      OBJCACHE_SRV_REFRESH: "often",
      OBJCACHE_MAX_IDLE_CONNS: "two",
      OBJCACHE_TLS: "true",
      OBJCACHE_TLS_CACERT: "/nonexistent/ca.pem",
      OBJCACHE_TLS_CLIENT_CERT: "/nonexistent/c.pem",
    });
    for (const want of [
      'OBJCACHE_SRV_REFRESH="often"',
      'OBJCACHE_MAX_IDLE_CONNS="two"',
      'OBJCACHE_TLS_CACERT="/nonexistent/ca.pem": no such file',
      "OBJCACHE_TLS_CLIENT_CERT and OBJCACHE_TLS_CLIENT_KEY: give both or neither",
    ])
      expect(p).to.include(want);
    expect(problems({ BACKEND_TYPE: "mongo" })).to.include('BACKEND_TYPE="mongo": expected redis, objcache');
  });

  it("the command exits 2 naming the variable", async () => {
    const out = await runCommand("ratelimit", [], { BACKEND_TYPE: "objcache", OBJCACHE_HOST_PORT: "x" });
    expect(out.code).to.equal(2);
    expect(out.stderr).to.include('OBJCACHE_HOST_PORT="x"');
  });
});
