// CONFIG_TYPE=GRPC_XDS_SOTW against a real ADS server (grpc-js) started by the test:
// the served configuration is applied and ACKed, an update changes decisions, an invalid
// configuration is NACKed with error_detail while the previous rules stay, a restarted
// server is reconnected to; FORCE_START_WITHOUT_INITIAL_CONFIG and
// HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED; settings validation.

import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import * as grpc from "@grpc/grpc-js";
import { expect } from "chai";
import {
  type AggregatedDiscoveryServiceServer,
  AggregatedDiscoveryServiceService,
} from "../../proto/gen/envoy/service/discovery/v3/ads.js";
import type {
  DiscoveryRequest,
  DiscoveryResponse,
} from "../../proto/gen/envoy/service/discovery/v3/discovery.js";
import { RateLimitResponse_Code as Code } from "../../proto/gen/envoy/service/ratelimit/v3/rls.js";
import {
  RateLimitConfig,
  type RateLimitDescriptor,
  RateLimitUnit,
} from "../../proto/gen/ratelimit/config/ratelimit/v3/rls_conf.js";
import { loadSettings, SettingsError } from "../../ratelimit/settings/environment.js";
import { backoffDelay, XdsConfigProvider } from "../../ratelimit/xds/client.js";
import { RATE_LIMIT_CONFIG_TYPE_URL } from "../../ratelimit/xds/convert.js";
import { pause, RateLimitProcess, RuntimeDir, uniq } from "./harness.js";

type Stream = grpc.ServerDuplexStream<DiscoveryRequest, DiscoveryResponse>;

/** A minimal state-of-the-world ADS server: serves the current snapshot to every stream. */
class AdsServer {
  readonly requests: { req: DiscoveryRequest; metadata: grpc.Metadata }[] = [];
  private server: grpc.Server | undefined;
  private readonly streams = new Set<Stream>();
  private current: DiscoveryResponse | undefined;
  private nonce = 0;
  port = 0;

  async start(port = 0, creds = grpc.ServerCredentials.createInsecure()): Promise<this> {
    const server = new grpc.Server();
    const impl: AggregatedDiscoveryServiceServer = {
      streamAggregatedResources: (call: Stream) => {
        this.streams.add(call);
        let first = true;
        call.on("data", (req: DiscoveryRequest) => {
          this.requests.push({ req, metadata: call.metadata });
          if (first && this.current) call.write(this.current);
          first = false;
        });
        call.on("end", () => call.end());
        call.on("error", () => {});
        call.on("close", () => this.streams.delete(call));
      },
    };
    server.addService(AggregatedDiscoveryServiceService, impl);
    this.port = await new Promise<number>((resolve, reject) =>
      server.bindAsync(`127.0.0.1:${port}`, creds, (err, p) => (err ? reject(err) : resolve(p))),
    );
    this.server = server;
    return this;
  }

  serve(version: string, configs: RateLimitConfig[]): string {
    const nonce = `n${++this.nonce}`;
    this.current = {
      versionInfo: version,
      resources: configs.map((c) => ({
        typeUrl: RATE_LIMIT_CONFIG_TYPE_URL,
        value: Buffer.from(RateLimitConfig.encode(c).finish()),
      })),
      canary: false,
      typeUrl: RATE_LIMIT_CONFIG_TYPE_URL,
      nonce,
      controlPlane: undefined,
    };
    for (const s of this.streams) s.write(this.current);
    return nonce;
  }

  /** The request answering `nonce` (an ACK or a NACK), once it arrived. */
  async reply(nonce: string): Promise<DiscoveryRequest> {
    for (let i = 0; i < 400; i++) {
      const r = this.requests.find((x) => x.req.responseNonce === nonce);
      if (r) return r.req;
      await pause(25);
    }
    throw new Error(`no reply to ${nonce}`);
  }

  stop(): void {
    this.server?.forceShutdown();
    this.streams.clear();
  }
}

const descriptor = (key: string, unit: RateLimitUnit, requestsPerUnit: number): RateLimitDescriptor => ({
  key,
  value: "",
  rateLimit: { unit, requestsPerUnit, unlimited: false, name: "", replaces: [] },
  descriptors: [],
  shadowMode: false,
  detailedMetric: false,
  quotaMode: false,
  metadata: undefined,
});
const config = (domain: string, ...descriptors: RateLimitDescriptor[]): RateLimitConfig => ({
  name: `${domain}-config`,
  domain,
  descriptors,
});

const limitOf = async (svc: RateLimitProcess, domain: string, key: string) =>
  (await svc.call(domain, [[[key, uniq()]]])).statuses[0]!.currentLimit?.requestsPerUnit;

describe("ratelimit configuration over xDS (ADS, state of the world)", function () {
  this.timeout(60_000);
  const cleanup: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanup.splice(0).reverse()) await c();
  });
  const runtime = () => {
    const r = new RuntimeDir();
    cleanup.push(() => r.cleanup());
    return r;
  };
  const xdsEnv = (port: number, env: Record<string, string> = {}) => ({
    CONFIG_TYPE: "GRPC_XDS_SOTW",
    CONFIG_GRPC_XDS_SERVER_URL: `127.0.0.1:${port}`,
    CONFIG_GRPC_XDS_NODE_ID: "node-under-test",
    CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL: "100ms",
    XDS_CLIENT_BACKOFF_INITIAL_INTERVAL: "100ms",
    XDS_CLIENT_BACKOFF_MAX_INTERVAL: "300ms",
    ...env,
  });

  it("applies and ACKs configurations, NACKs an invalid one keeping the rules, and reconnects", async () => {
    const ads = await new AdsServer().start();
    cleanup.push(() => ads.stop());
    // A rule's metadata travels over xDS too (returned with RESPONSE_DYNAMIC_METADATA).
    const v1 = ads.serve("1", [
      config("xds", {
        ...descriptor("k", RateLimitUnit.MINUTE, 5),
        metadata: { team: "blue", tier: { n: 1 } },
      }),
    ]);
    const svc = await RateLimitProcess.start({
      runtime: runtime(),
      backend: "memory",
      env: xdsEnv(ads.port, {
        CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS: "x-tenant:blue,Authorization:Bearer t0ken",
        CONFIG_GRPC_XDS_NODE_METADATA: "zone=eu",
        RESPONSE_DYNAMIC_METADATA: "true",
      }),
    });
    cleanup.push(() => svc.stop());

    // The subscription: node id and metadata, type URL, extra headers as gRPC metadata.
    const sub = ads.requests[0]!;
    expect(sub.req.typeUrl).to.equal(RATE_LIMIT_CONFIG_TYPE_URL);
    expect(sub.req.node?.id).to.equal("node-under-test");
    expect(sub.req.node?.metadata).to.deep.equal({ zone: "eu" });
    expect(sub.req.versionInfo).to.equal("");
    expect(sub.metadata.get("x-tenant")).to.deep.equal(["blue"]);
    expect(sub.metadata.get("authorization")).to.deep.equal(["Bearer t0ken"]);
    const ack1 = await ads.reply(v1);
    expect([ack1.versionInfo, ack1.errorDetail]).to.deep.equal(["1", undefined]);

    const first = await svc.call("xds", [[["k", "a"]]]);
    const s = first.statuses[0]!;
    expect([s.code, s.currentLimit?.requestsPerUnit, s.limitRemaining]).to.deep.equal([Code.OK, 5, 4]);
    expect(first.dynamicMetadata?.metadata).to.deep.equal({ team: "blue", tier: { n: 1 } });
    expect(await svc.stat("ratelimit.service.config_load_success")).to.equal(1);

    // An update: new limits and a new domain; ACK with the new version.
    const v2 = ads.serve("2", [
      config("xds", descriptor("k", RateLimitUnit.MINUTE, 0)),
      config("other", descriptor("o", RateLimitUnit.HOUR, 7)),
    ]);
    const ack2 = await ads.reply(v2);
    expect([ack2.versionInfo, ack2.errorDetail]).to.deep.equal(["2", undefined]);
    expect((await svc.call("xds", [[["k", "a"]]])).overallCode).to.equal(Code.OVER_LIMIT);
    expect(await limitOf(svc, "other", "o")).to.equal(7);
    expect(await (await fetch(`${svc.debugUrl}/rlconfig`)).text()).to.contain(
      "other.o: unit=HOUR requests_per_unit=7",
    );

    // Invalid: a unit of UNKNOWN without unlimited. NACK naming the problem, rules unchanged.
    const v3 = ads.serve("3", [config("xds", descriptor("k", RateLimitUnit.UNKNOWN, 1))]);
    const nack = await ads.reply(v3);
    expect(nack.versionInfo).to.equal("2");
    expect(nack.errorDetail?.code).to.equal(3);
    expect(nack.errorDetail?.message).to.equal("xds-config: invalid rate limit unit 'UNKNOWN'");
    expect(await limitOf(svc, "other", "o")).to.equal(7);
    expect(await svc.stat("ratelimit.service.config_load_error")).to.equal(1);
    expect(svc.output).to.contain(
      "Error loading new configuration: xds-config: invalid rate limit unit 'UNKNOWN'",
    );

    // A duplicate domain is refused with the file loader's text.
    const v4 = ads.serve("4", [config("xds"), config("xds")]);
    expect((await ads.reply(v4)).errorDetail?.message).to.contain("duplicate domain 'xds' in config file");

    // The server goes away and comes back on the same port with a new snapshot.
    const port = ads.port;
    ads.stop();
    await pause(300);
    const ads2 = await new AdsServer().start(port);
    cleanup.push(() => ads2.stop());
    const v5 = ads2.serve("5", [config("xds", descriptor("k", RateLimitUnit.SECOND, 42))]);
    const ack5 = await ads2.reply(v5);
    expect(ack5.versionInfo).to.equal("5");
    expect(ads2.requests[0]!.req.versionInfo).to.equal("2");
    expect(await limitOf(svc, "xds", "k")).to.equal(42);
    expect(await limitOf(svc, "other", "o")).to.equal(undefined);
  });

  it("waits for the first valid configuration before listening, unless FORCE_START_WITHOUT_INITIAL_CONFIG", async () => {
    const ads = await new AdsServer().start();
    cleanup.push(() => ads.stop());
    ads.serve("bad", [config("w", descriptor("k", RateLimitUnit.UNKNOWN, 1))]);
    const waiting = new RateLimitProcess({ runtime: runtime(), backend: "memory", env: xdsEnv(ads.port) });
    cleanup.push(() => waiting.stop());
    // However long the process takes to start on a busy machine: it refuses the
    // configuration, and it has not started listening then.
    await waiting.until("the invalid configuration refused", async () =>
      waiting.output.includes("invalid rate limit unit"),
    );
    expect(waiting.output).not.to.contain("rate limit service started");
    ads.serve("good", [config("w", descriptor("k", RateLimitUnit.MINUTE, 3))]);
    await waiting.ready();
    expect(await limitOf(waiting, "w", "k")).to.equal(3);

    // Forced start with no server at all: listeners open, calls fail, health says why.
    const gone = await new AdsServer().start();
    const port = gone.port;
    gone.stop();
    const forced = await RateLimitProcess.start({
      runtime: runtime(),
      backend: "memory",
      env: xdsEnv(port, {
        FORCE_START_WITHOUT_INITIAL_CONFIG: "true",
        HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED: "true",
      }),
    });
    cleanup.push(() => forced.stop());
    const err = await forced.call("w", [[["k", "x"]]]).then(
      () => undefined,
      (e: grpc.ServiceError) => e,
    );
    expect(err?.details).to.equal("no rate limit configuration loaded");
    const unhealthy = await fetch(`${forced.httpUrl}/healthcheck`);
    expect(unhealthy.status).to.equal(500);
    expect(await unhealthy.text()).to.contain("config");

    const late = await new AdsServer().start(port);
    cleanup.push(() => late.stop());
    late.serve("1", [config("w", descriptor("k", RateLimitUnit.MINUTE, 9))]);
    await forced.until("the configuration to arrive", async () => (await limitOf(forced, "w", "k")) === 9);
    expect((await fetch(`${forced.httpUrl}/healthcheck`)).status).to.equal(200);
    // An empty snapshot removes every domain: the config component is unhealthy again.
    const empty = late.serve("2", []);
    expect((await late.reply(empty)).errorDetail).to.equal(undefined);
    expect((await fetch(`${forced.httpUrl}/healthcheck`)).status).to.equal(500);
  });

  it("connects over mutual TLS with CONFIG_GRPC_XDS_SERVER_TLS_* and the client certificate", async () => {
    const dir = runtime().base;
    const f = (name: string) => path.join(dir, name);
    const ssl = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
    ssl(
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      "ca.key",
      "-out",
      "ca.pem",
      "-days",
      "1",
      "-subj",
      "/CN=test-ca",
    );
    for (const [name, san] of [
      ["server", "DNS:xds.internal"],
      ["client", "DNS:ratelimit.internal"],
    ] as const) {
      ssl(
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        `${name}.key`,
        "-out",
        `${name}.csr`,
        "-subj",
        `/CN=${name}`,
      );
      writeFileSync(f(`${name}.ext`), `subjectAltName=${san}\n`);
      ssl(
        "x509",
        "-req",
        "-in",
        `${name}.csr`,
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        `${name}.pem`,
        "-days",
        "1",
        "-extfile",
        `${name}.ext`,
      );
    }
    const creds = grpc.ServerCredentials.createSsl(
      readFileSync(f("ca.pem")),
      [{ private_key: readFileSync(f("server.key")), cert_chain: readFileSync(f("server.pem")) }],
      true, // the client must present a certificate signed by the CA
    );
    const ads = await new AdsServer().start(0, creds);
    cleanup.push(() => ads.stop());
    const v1 = ads.serve("tls-1", [config("tls", descriptor("k", RateLimitUnit.HOUR, 11))]);
    const tlsEnv = {
      CONFIG_GRPC_XDS_SERVER_USE_TLS: "true",
      CONFIG_GRPC_XDS_SERVER_TLS_CACERT: f("ca.pem"),
      CONFIG_GRPC_XDS_SERVER_TLS_SAN: "xds.internal",
      CONFIG_GRPC_XDS_CLIENT_TLS_CERT: f("client.pem"),
      CONFIG_GRPC_XDS_CLIENT_TLS_KEY: f("client.key"),
    };
    const svc = await RateLimitProcess.start({
      runtime: runtime(),
      backend: "memory",
      env: xdsEnv(ads.port, tlsEnv),
    });
    cleanup.push(() => svc.stop());
    expect((await ads.reply(v1)).versionInfo).to.equal("tls-1");
    expect(await limitOf(svc, "tls", "k")).to.equal(11);

    // Without the client certificate the server refuses the connection: no configuration.
    const noCert = new RateLimitProcess({
      runtime: runtime(),
      backend: "memory",
      env: xdsEnv(ads.port, {
        ...tlsEnv,
        CONFIG_GRPC_XDS_CLIENT_TLS_CERT: "",
        CONFIG_GRPC_XDS_CLIENT_TLS_KEY: "",
      }),
    });
    cleanup.push(() => noCert.stop());
    await noCert.until("a refused connection", async () => noCert.output.includes("xDS stream ended"));
    expect(noCert.output).not.to.contain("rate limit service started");
    expect(ads.requests.length).to.equal(2); // the subscription and the ACK of the first client
  });

  it("reads and validates the xDS settings", () => {
    const s = loadSettings({ CONFIG_TYPE: "GRPC_XDS_SOTW" });
    expect(s.configType).to.equal("GRPC_XDS_SOTW");
    expect(s.xds).to.deep.include({
      nodeId: "default",
      serverUrl: "localhost:18000",
      connectRetryIntervalMs: 3000,
      useTls: false,
      backoffJitter: false,
      backoffInitialIntervalMs: 10_000,
      backoffMaxIntervalMs: 60_000,
      backoffRandomFactor: 0.5,
      maxMsgSizeInBytes: undefined,
    });
    const problems = (env: Record<string, string>) => {
      try {
        loadSettings({ CONFIG_TYPE: "GRPC_XDS_SOTW", ...env });
      } catch (err) {
        expect(err).to.be.instanceOf(SettingsError);
        return (err as SettingsError).problems.join("\n");
      }
      throw new Error("accepted");
    };
    expect(problems({ CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL: "soon" })).to.contain(
      "CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL",
    );
    expect(problems({ XDS_CLIENT_BACKOFF_RANDOM_FACTOR: "2" })).to.contain(
      "XDS_CLIENT_BACKOFF_RANDOM_FACTOR",
    );
    expect(problems({ XDS_CLIENT_BACKOFF_JITTER: "sometimes" })).to.contain("XDS_CLIENT_BACKOFF_JITTER");
    expect(problems({ XDS_CLIENT_BACKOFF_INITIAL_INTERVAL: "2m" })).to.contain(
      "XDS_CLIENT_BACKOFF_MAX_INTERVAL",
    );
    expect(problems({ XDS_CLIENT_MAX_MSG_SIZE_IN_BYTES: "-1" })).to.contain(
      "XDS_CLIENT_MAX_MSG_SIZE_IN_BYTES",
    );
    expect(problems({ CONFIG_GRPC_XDS_SERVER_USE_TLS: "nope" })).to.contain("CONFIG_GRPC_XDS_SERVER_USE_TLS");
    expect(
      problems({
        CONFIG_GRPC_XDS_SERVER_USE_TLS: "true",
        CONFIG_GRPC_XDS_SERVER_TLS_CACERT: "/nonexistent.pem",
      }),
    ).to.contain("CONFIG_GRPC_XDS_SERVER_TLS_CACERT=/nonexistent.pem: cannot read the file");
    expect(problems({ CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS: "bad header:x" })).to.contain(
      "CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS",
    );
    expect(problems({ CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS: "novalue" })).to.contain("<key>:<value>");
    expect(problems({ CONFIG_GRPC_XDS_NODE_METADATA: "novalue" })).to.contain(
      "CONFIG_GRPC_XDS_NODE_METADATA",
    );

    // Backoff: grows by 1.5 up to the maximum; jitter spreads it by the random factor.
    const x = loadSettings({
      XDS_CLIENT_BACKOFF_INITIAL_INTERVAL: "1s",
      XDS_CLIENT_BACKOFF_MAX_INTERVAL: "2s",
    }).xds;
    expect([1, 2, 3, 4].map((n) => backoffDelay(x, n))).to.deep.equal([1000, 1500, 2000, 2000]);
    const j = { ...x, backoffJitter: true, backoffRandomFactor: 0.5 };
    expect([backoffDelay(j, 1, () => 0), backoffDelay(j, 1, () => 1)]).to.deep.equal([500, 1500]);
    expect(XdsConfigProvider).to.be.a("function");
  });
});
