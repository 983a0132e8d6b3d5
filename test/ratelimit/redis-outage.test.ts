// Redis going away and coming back, on a private redis-server started on a free
// port: calls fail with a gRPC error counted as redis_error (the process stays up),
// /json answers 500, the cache health component fails with
// KVSTORE_HEALTH_CHECK_ACTIVE_CONNECTION, and everything recovers when Redis
// returns. Also the pool's ERROR behaviour when every connection is busy.

import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import * as grpc from "@grpc/grpc-js";
import { expect } from "chai";
import { Redis } from "ioredis";
import { RateLimitResponse_Code as Code } from "../../proto/gen/envoy/service/ratelimit/v3/rls.js";
import { freePort } from "../support/ports.js";
import { baseArgs, RedisServer } from "../support/redis-servers.js";
import { TestPki } from "./certs.js";
import { RateLimitProcess, RuntimeDir, uniq } from "./harness.js";

const CONFIG = "domain: outage\ndescriptors: [{key: k, rate_limit: {unit: hour, requests_per_unit: 100}}]\n";

/** A private redis-server on `port`; `extraArgs` come last, so they may override the port. */
const privateRedis = (port: number, extraArgs: string[] = [], password?: string, tlsCa?: Buffer) =>
  new RedisServer(port, [...baseArgs(port, tmpdir()), ...extraArgs], undefined, password, tlsCa);

describe("ratelimit with Redis down and back", function () {
  this.timeout(60_000);
  let runtime: RuntimeDir;
  let redis: RedisServer;
  let svc: RateLimitProcess | undefined;

  before(async () => {
    runtime = new RuntimeDir({ "outage.yaml": CONFIG });
    redis = privateRedis(await freePort());
    await redis.start();
  });
  after(async () => {
    await svc?.stop();
    await redis?.kill();
    runtime?.cleanup();
  });

  it("fails calls while Redis is down, stays up, and recovers when it returns", async () => {
    svc = await RateLimitProcess.start({
      runtime,
      env: {
        KVSTORE_URL: `127.0.0.1:${redis.port}`,
        KVSTORE_HEALTH_CHECK_ACTIVE_CONNECTION: "true",
        KVSTORE_TIMEOUT: "2s",
      },
    });
    const v = uniq();
    expect((await svc.call("outage", [[["k", v]]])).statuses[0]!.limitRemaining).to.equal(99);
    expect((await fetch(`${svc.httpUrl}/healthcheck`)).status).to.equal(200);

    await redis.kill();
    const started = Date.now();
    const err = await svc.call("outage", [[["k", v]]]).then(
      () => undefined,
      (e: grpc.ServiceError) => e,
    );
    expect(err?.code).to.equal(grpc.status.UNKNOWN);
    expect(err?.details).to.match(/^redis 127\.0\.0\.1:\d+: /);
    expect(Date.now() - started).to.be.lessThan(2000);
    expect(await svc.stat("ratelimit.service.call.should_rate_limit.redis_error")).to.be.at.least(1);
    // total_hits is counted before the store is asked, as in the reference.
    expect(await svc.stat("ratelimit.service.rate_limit.outage.k.total_hits")).to.equal(2);

    const json = await svc.json({ domain: "outage", descriptors: [{ entries: [{ key: "k", value: v }] }] });
    expect(json.status).to.equal(500);
    expect(json.body).to.include("redis 127.0.0.1");
    const health = await fetch(`${svc.httpUrl}/healthcheck`);
    expect(health.status).to.equal(500);
    expect(await health.text()).to.include("cache: no active connection");
    expect(svc.child.exitCode).to.equal(null);

    await redis.start();
    await svc.until(
      "decisions to work again",
      async () => (await svc!.call("outage", [[["k", uniq()]]])).overallCode === Code.OK,
      15_000,
    );
    expect((await fetch(`${svc.httpUrl}/healthcheck`)).status).to.equal(200);
    await svc.stop();
    svc = undefined;
  });

  it("starts while Redis is down and serves once it is up", async () => {
    await redis.kill();
    svc = await RateLimitProcess.start({
      runtime,
      env: { KVSTORE_URL: `127.0.0.1:${redis.port}`, KVSTORE_TIMEOUT: "1s" },
    });
    const failed = await svc.call("outage", [[["k", uniq()]]]).then(
      () => false,
      () => true,
    );
    expect(failed).to.equal(true);
    await redis.start();
    await svc.until(
      "decisions to work",
      async () => (await svc!.call("outage", [[["k", uniq()]]])).overallCode === Code.OK,
      15_000,
    );
    await svc.stop();
    svc = undefined;
  });

  it("REDIS_STARTUP_MAX_ELAPSED_TIME: the start waits for Redis and serves once it comes in time", async () => {
    await redis.kill();
    const restart = new Promise((resolve) => setTimeout(resolve, 1500)).then(() => redis.start());
    svc = await RateLimitProcess.start({
      runtime,
      env: {
        KVSTORE_URL: `127.0.0.1:${redis.port}`,
        REDIS_STARTUP_INITIAL_INTERVAL: "100ms",
        REDIS_STARTUP_MAX_INTERVAL: "300ms",
        REDIS_STARTUP_MAX_ELAPSED_TIME: "20s",
      },
    });
    await restart;
    // Started only once Redis answered: the first decision works.
    expect((await svc.call("outage", [[["k", uniq()]]])).overallCode).to.equal(Code.OK);
    await svc.stop();
    svc = undefined;
  });

  it("REDIS_STARTUP_MAX_ELAPSED_TIME: without Redis in that time the start fails, naming it", async () => {
    const port = await freePort();
    const started = Date.now();
    const failure = await RateLimitProcess.start({
      runtime,
      env: {
        KVSTORE_URL: `127.0.0.1:${port}`,
        REDIS_STARTUP_INITIAL_INTERVAL: "100ms",
        REDIS_STARTUP_MAX_ELAPSED_TIME: "1500ms",
      },
    }).then(
      (p) => p.stop().then(() => "started"),
      (err: Error) => err.message,
    );
    expect(failure).to.include("ratelimit exited with 1");
    expect(failure).to.include("KVSTORE_STARTUP_MAX_ELAPSED_TIME").and.to.include(`127.0.0.1:${port}`);
    expect(Date.now() - started).to.be.at.least(1500);
  });

  // Two decisions, the second 50 ms after the first. The decisions of one event-loop turn
  // share a connection, so the second must come in a turn of its own to need another.
  const callsInTwoTurns = () => [
    svc!.call("outage", [[["k", uniq()]]]),
    new Promise((r) => setTimeout(r, 50)).then(() => svc!.call("outage", [[["k", uniq()]]])),
  ];

  it("KVSTORE_POOL_ON_EMPTY_BEHAVIOR=ERROR fails a call when every connection stays busy past the wait", async () => {
    svc = await RateLimitProcess.start({
      runtime,
      env: {
        KVSTORE_URL: `127.0.0.1:${redis.port}`,
        KVSTORE_POOL_SIZE: "1",
        KVSTORE_POOL_ON_EMPTY_BEHAVIOR: "ERROR",
        KVSTORE_POOL_ON_EMPTY_WAIT_DURATION: "100ms",
      },
    });
    const admin = new Redis({ port: redis.port, host: "127.0.0.1" });
    try {
      await admin.call("CLIENT", "PAUSE", "600", "WRITE");
      const results = await Promise.allSettled(callsInTwoTurns());
      const errors = results
        .filter((r) => r.status === "rejected")
        .map((r) => (r.reason as grpc.ServiceError).details);
      expect(errors).to.have.length(1);
      expect(errors[0]).to.include("redis pool empty");
      expect(results.filter((r) => r.status === "fulfilled")).to.have.length(1);
    } finally {
      admin.disconnect();
    }
  });

  it("KVSTORE_POOL_ON_EMPTY_BEHAVIOR=CREATE opens an extra connection after the wait", async () => {
    await svc?.stop();
    svc = await RateLimitProcess.start({
      runtime,
      env: {
        KVSTORE_URL: `127.0.0.1:${redis.port}`,
        KVSTORE_POOL_SIZE: "1",
        KVSTORE_POOL_ON_EMPTY_WAIT_DURATION: "100ms",
      },
    });
    const admin = new Redis({ port: redis.port, host: "127.0.0.1" });
    try {
      await admin.call("CLIENT", "PAUSE", "600", "WRITE");
      const results = await Promise.allSettled(callsInTwoTurns());
      expect(results.map((r) => r.status)).to.deep.equal(["fulfilled", "fulfilled"]);
    } finally {
      admin.disconnect();
    }
  });
});

describe("ratelimit Redis connection settings", function () {
  this.timeout(60_000);
  let runtime: RuntimeDir;
  const servers: RedisServer[] = [];
  const services: RateLimitProcess[] = [];
  const pki = new TestPki("rl-test-ca");
  before(() => {
    runtime = new RuntimeDir({ "outage.yaml": CONFIG });
  });
  after(async () => {
    await Promise.all(services.map((s) => s.stop()));
    await Promise.all(servers.map((s) => s.kill()));
    runtime?.cleanup();
    pki.cleanup();
  });

  it("KVSTORE_AUTH takes <password> or <username>:<password>", async () => {
    const redis = privateRedis(await freePort(), ["--requirepass", "s3cret"], "s3cret");
    servers.push(redis);
    await redis.start();
    for (const auth of ["s3cret", "default:s3cret"]) {
      const svc = await RateLimitProcess.start({
        runtime,
        env: { KVSTORE_URL: `127.0.0.1:${redis.port}`, KVSTORE_AUTH: auth },
      });
      services.push(svc);
      expect((await svc.call("outage", [[["k", uniq()]]])).statuses[0]!.limitRemaining, auth).to.equal(99);
    }
    const wrong = await RateLimitProcess.start({
      runtime,
      env: { KVSTORE_URL: `127.0.0.1:${redis.port}`, KVSTORE_AUTH: "nope", KVSTORE_TIMEOUT: "1s" },
    });
    services.push(wrong);
    const err = await wrong.call("outage", [[["k", uniq()]]]).then(
      () => undefined,
      (e: grpc.ServiceError) => e,
    );
    expect(err?.details).to.match(/^redis 127\.0\.0\.1:\d+: /);
  });

  it("KVSTORE_TLS with KVSTORE_TLS_CACERT and client certificates", async () => {
    const server = pki.issue("localhost", "DNS:localhost,IP:127.0.0.1", "serverAuth");
    const client = pki.issue("rl-client", "DNS:rl-client", "clientAuth");
    const port = await freePort();
    const redis = privateRedis(
      port,
      [
        "--port",
        "0",
        "--tls-port",
        String(port),
        "--tls-cert-file",
        server.cert,
        "--tls-key-file",
        server.key,
        "--tls-ca-cert-file",
        pki.ca.cert,
        "--tls-auth-clients",
        "optional",
      ],
      undefined,
      readFileSync(pki.ca.cert),
    );
    servers.push(redis);
    await redis.start();
    const env = { KVSTORE_URL: `127.0.0.1:${port}`, KVSTORE_TLS: "true", KVSTORE_TIMEOUT: "2s" };
    const trusted = await RateLimitProcess.start({
      runtime,
      env: { ...env, KVSTORE_TLS_CACERT: pki.ca.cert },
    });
    services.push(trusted);
    expect((await trusted.call("outage", [[["k", uniq()]]])).statuses[0]!.limitRemaining).to.equal(99);
    const withClientCert = await RateLimitProcess.start({
      runtime,
      env: {
        ...env,
        KVSTORE_TLS_CACERT: pki.ca.cert,
        KVSTORE_TLS_CLIENT_CERT: client.cert,
        KVSTORE_TLS_CLIENT_KEY: client.key,
      },
    });
    services.push(withClientCert);
    expect((await withClientCert.call("outage", [[["k", uniq()]]])).overallCode).to.equal(Code.OK);
    // Without the CA the server's certificate is not trusted.
    const untrusted = await RateLimitProcess.start({ runtime, env });
    services.push(untrusted);
    const failed = await untrusted.call("outage", [[["k", uniq()]]]).then(
      () => false,
      () => true,
    );
    expect(failed).to.equal(true);
  });

  it("KVSTORE_SOCKET_TYPE=unix connects to a socket path", async () => {
    const socket = path.join(runtime.base, "redis.sock");
    const redis = privateRedis(await freePort(), ["--unixsocket", socket]);
    servers.push(redis);
    await redis.start();
    const svc = await RateLimitProcess.start({
      runtime,
      env: { KVSTORE_SOCKET_TYPE: "unix", KVSTORE_URL: socket },
    });
    services.push(svc);
    expect((await svc.call("outage", [[["k", uniq()]]])).statuses[0]!.limitRemaining).to.equal(99);
  });
});
