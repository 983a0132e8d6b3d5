// TLS on the gRPC listener: certificates made by the test (openssl), a real grpc-js
// TLS client, rotation of the server certificate without a restart, mutual TLS
// with the client-name check, and the maximum connection age with its grace.

import { copyFileSync, renameSync, writeFileSync } from "node:fs";
import http2 from "node:http2";
import tls from "node:tls";
import * as grpc from "@grpc/grpc-js";
import { expect } from "chai";
import {
  RateLimitResponse_Code as Code,
  RateLimitServiceClient,
} from "../../proto/gen/envoy/service/ratelimit/v3/rls.js";
import { loadSettings, SettingsError } from "../../ratelimit/settings/environment.js";
import { type CertFiles, TestPki } from "./certs.js";
import { callGrpc, pause, RateLimitProcess, RuntimeDir, request, uniq } from "./harness.js";

const CONFIG = `domain: tls
descriptors:
  - {key: a, rate_limit: {unit: hour, requests_per_unit: 100}}
`;

function tlsClient(address: string, ca: Buffer, identity?: { key: Buffer; cert: Buffer }) {
  return new RateLimitServiceClient(
    address,
    grpc.credentials.createSsl(ca, identity?.key ?? null, identity?.cert ?? null),
  );
}

async function decide(client: RateLimitServiceClient) {
  try {
    return await callGrpc(client, request("tls", [[["a", uniq()]]]));
  } finally {
    client.close();
  }
}

async function callError(client: RateLimitServiceClient): Promise<grpc.ServiceError> {
  try {
    await decide(client);
  } catch (err) {
    return err as grpc.ServiceError;
  }
  throw new Error("the call succeeded but should have been refused");
}

/** The common name of the certificate a fresh TLS connection is served. */
function servedCommonName(port: number, ca: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect(
      { host: "127.0.0.1", port, ca, ALPNProtocols: ["h2"], servername: "localhost" },
      () => {
        const cn = socket.getPeerCertificate().subject.CN;
        socket.destroy();
        resolve(String(cn));
      },
    );
    socket.once("error", reject);
  });
}

/** Replaces a file the way deploy tools do: write beside it, then rename over it. */
function replaceFile(target: string, from: string | Buffer): void {
  const tmp = `${target}.tmp`;
  if (typeof from === "string") copyFileSync(from, tmp);
  else writeFileSync(tmp, from);
  renameSync(tmp, target);
}

describe("ratelimit gRPC TLS", function () {
  this.timeout(60_000);
  let pki: TestPki;
  let runtime: RuntimeDir;
  let svc: RateLimitProcess;
  let certFile: string;
  let keyFile: string;

  before(async () => {
    pki = new TestPki("server-ca-1");
    const first = pki.issue("server-1", "DNS:localhost,IP:127.0.0.1", "serverAuth");
    runtime = new RuntimeDir({ "tls.yaml": CONFIG });
    certFile = pki.file("server.crt");
    keyFile = pki.file("server.key");
    copyFileSync(first.cert, certFile);
    copyFileSync(first.key, keyFile);
    svc = await RateLimitProcess.start({
      runtime,
      backend: "memory",
      env: { GRPC_SERVER_USE_TLS: "true", GRPC_SERVER_TLS_CERT: certFile, GRPC_SERVER_TLS_KEY: keyFile },
    });
  });
  after(async () => {
    await svc?.stop();
    runtime?.cleanup();
    pki?.cleanup();
  });

  it("answers a TLS client that trusts the server's CA", async () => {
    const res = await decide(tlsClient(svc.grpcAddress, pki.read(pki.ca.cert)));
    expect(res.overallCode).to.equal(Code.OK);
  });

  it("refuses a plain-text client", async () => {
    const err = await callError(
      new RateLimitServiceClient(svc.grpcAddress, grpc.credentials.createInsecure()),
    );
    expect(err.code).to.equal(grpc.status.UNAVAILABLE);
  });

  it("serves a rotated certificate to new connections without a restart, and keeps it when a rotated file is bad", async () => {
    const port = Number(svc.grpcAddress.split(":")[1]);
    const ca1 = pki.read(pki.ca.cert);
    expect(await servedCommonName(port, ca1)).to.equal("server-1");
    const before = tlsClient(svc.grpcAddress, ca1);
    expect((await callGrpc(before, request("tls", [[["a", uniq()]]]))).overallCode).to.equal(Code.OK);

    // The new certificate comes from another CA: only clients trusting it can connect after the swap.
    const pki2 = new TestPki("server-ca-2");
    try {
      const second = pki2.issue("server-2", "DNS:localhost,IP:127.0.0.1", "serverAuth");
      const ca2 = pki2.read(pki2.ca.cert);
      expect((await callError(tlsClient(svc.grpcAddress, ca2))).code).to.equal(grpc.status.UNAVAILABLE);
      replaceFile(keyFile, second.key);
      replaceFile(certFile, second.cert);
      await svc.until(
        "the rotated certificate",
        async () => (await servedCommonName(port, ca2)) === "server-2",
      );
      expect((await decide(tlsClient(svc.grpcAddress, ca2))).overallCode).to.equal(Code.OK);
      expect(svc.output).to.include("gRPC server TLS certificate reloaded");
      // A connection made before the rotation keeps working.
      expect((await callGrpc(before, request("tls", [[["a", uniq()]]]))).overallCode).to.equal(Code.OK);
      before.close();

      // A broken certificate file is refused; the service goes on with the last good one.
      const mark = svc.output.length;
      replaceFile(certFile, Buffer.from("-----BEGIN CERTIFICATE-----\nnot a certificate\n"));
      await svc.until("the refusal of the bad file", async () =>
        svc.output.slice(mark).includes("keeping the previous certificate"),
      );
      expect(svc.output.slice(mark)).to.include(`GRPC_SERVER_TLS_CERT=${certFile}`);
      expect(await servedCommonName(port, ca2)).to.equal("server-2");
      expect((await decide(tlsClient(svc.grpcAddress, ca2))).overallCode).to.equal(Code.OK);

      // A certificate whose key does not match (the key file not rotated yet) is refused the same way.
      const third = pki.issue("server-3", "DNS:localhost,IP:127.0.0.1", "serverAuth");
      const mark2 = svc.output.length;
      replaceFile(certFile, third.cert);
      await svc.until("the refusal of the mismatched pair", async () =>
        svc.output.slice(mark2).includes("keeping the previous certificate"),
      );
      expect(await servedCommonName(port, ca2)).to.equal("server-2");
      replaceFile(keyFile, third.key);
      await svc.until(
        "the completed rotation",
        async () => (await servedCommonName(port, ca1)) === "server-3",
      );
    } finally {
      pki2.cleanup();
    }
  });

  it("stops at start with exit code 2 naming an unreadable certificate file", async () => {
    const missing = pki.file("missing.crt");
    const p = new RateLimitProcess({
      runtime,
      backend: "memory",
      env: { GRPC_SERVER_USE_TLS: "true", GRPC_SERVER_TLS_CERT: missing, GRPC_SERVER_TLS_KEY: keyFile },
    });
    const code = await new Promise<number | null>((resolve) => p.child.once("exit", resolve));
    expect(code).to.equal(2);
    expect(p.output).to.include(`GRPC_SERVER_TLS_CERT=${missing}: cannot read`);
  });
});

describe("ratelimit gRPC mutual TLS", function () {
  this.timeout(60_000);
  let serverPki: TestPki;
  let clientPki: TestPki;
  let otherPki: TestPki;
  let runtime: RuntimeDir;
  let svc: RateLimitProcess;
  let allowed: CertFiles;
  let wrongName: CertFiles;
  let foreign: CertFiles;
  const identity = (c: CertFiles) => ({ key: clientPki.read(c.key), cert: clientPki.read(c.cert) });

  before(async () => {
    serverPki = new TestPki("server-ca");
    clientPki = new TestPki("client-ca");
    otherPki = new TestPki("other-ca");
    const server = serverPki.issue("server", "DNS:localhost,IP:127.0.0.1", "serverAuth");
    allowed = clientPki.issue("envoy", "DNS:envoy.internal,DNS:spare.internal", "clientAuth");
    wrongName = clientPki.issue("intruder", "DNS:intruder.internal", "clientAuth");
    foreign = otherPki.issue("foreign", "DNS:envoy.internal", "clientAuth");
    runtime = new RuntimeDir({ "tls.yaml": CONFIG });
    svc = await RateLimitProcess.start({
      runtime,
      backend: "memory",
      env: {
        GRPC_SERVER_USE_TLS: "true",
        GRPC_SERVER_TLS_CERT: server.cert,
        GRPC_SERVER_TLS_KEY: server.key,
        GRPC_CLIENT_TLS_CACERT: clientPki.ca.cert,
        GRPC_CLIENT_TLS_SAN: "envoy.internal",
      },
    });
  });
  after(async () => {
    await svc?.stop();
    runtime?.cleanup();
    for (const p of [serverPki, clientPki, otherPki]) p?.cleanup();
  });

  it("accepts a client certificate from the client CA carrying the name", async () => {
    const res = await decide(
      tlsClient(svc.grpcAddress, serverPki.read(serverPki.ca.cert), identity(allowed)),
    );
    expect(res.overallCode).to.equal(Code.OK);
  });

  it("refuses a client without a certificate", async () => {
    const err = await callError(tlsClient(svc.grpcAddress, serverPki.read(serverPki.ca.cert)));
    expect(err.code).to.equal(grpc.status.UNAVAILABLE);
  });

  it("refuses a client certificate from another CA", async () => {
    const err = await callError(
      tlsClient(svc.grpcAddress, serverPki.read(serverPki.ca.cert), {
        key: otherPki.read(foreign.key),
        cert: otherPki.read(foreign.cert),
      }),
    );
    expect(err.code).to.equal(grpc.status.UNAVAILABLE);
  });

  it("refuses a client certificate without the GRPC_CLIENT_TLS_SAN name", async () => {
    const err = await callError(
      tlsClient(svc.grpcAddress, serverPki.read(serverPki.ca.cert), identity(wrongName)),
    );
    expect(err.code).to.equal(grpc.status.UNAUTHENTICATED);
    expect(err.details).to.include("does not carry the DNS name envoy.internal");
  });
});

describe("ratelimit gRPC connection age", function () {
  this.timeout(30_000);

  it("GRPC_MAX_CONNECTION_AGE sends GOAWAY after the age; GRPC_MAX_CONNECTION_AGE_GRACE then closes open calls", async () => {
    const runtime = new RuntimeDir({ "tls.yaml": CONFIG });
    const svc = await RateLimitProcess.start({
      runtime,
      backend: "memory",
      env: { GRPC_MAX_CONNECTION_AGE: "1s", GRPC_MAX_CONNECTION_AGE_GRACE: "1s" },
    });
    try {
      const started = Date.now();
      const session = http2.connect(`http://${svc.grpcAddress}`);
      session.on("error", () => {});
      // A call whose request never ends stays open until the grace period is over.
      const stream = session.request({
        ":method": "POST",
        ":path": "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit",
        "content-type": "application/grpc",
        te: "trailers",
      });
      stream.on("error", () => {});
      const goaway = new Promise<number>((resolve) => session.once("goaway", () => resolve(Date.now())));
      const closed = new Promise<number>((resolve) => session.once("close", () => resolve(Date.now())));
      const goawayAt = await goaway;
      const closedAt = await closed;
      // ±10 % jitter around 1 s; upper bounds are loose because the machine is shared.
      expect(goawayAt - started).to.be.within(850, 8000);
      expect(closedAt - goawayAt).to.be.within(800, 8000);

      // Clients reconnect transparently: a grpc-js client keeps working across the age.
      const client = new RateLimitServiceClient(svc.grpcAddress, grpc.credentials.createInsecure());
      try {
        for (let i = 0; i < 3; i++) {
          expect((await callGrpc(client, request("tls", [[["a", uniq()]]]))).overallCode).to.equal(Code.OK);
          await pause(700);
        }
      } finally {
        client.close();
      }
    } finally {
      await svc.stop();
      runtime.cleanup();
    }
  });
});

describe("ratelimit TLS settings", () => {
  it("defaults to plain text", () => {
    expect(loadSettings({})).to.deep.include({
      grpcServerUseTls: false,
      grpcServerTlsCert: "",
      grpcServerTlsKey: "",
      grpcClientTlsCaCert: "",
      grpcClientTlsSan: "",
    });
  });

  it("names what is missing or inconsistent", () => {
    const problems = (env: Record<string, string>) => {
      try {
        loadSettings(env);
        return "";
      } catch (err) {
        expect(err).to.be.instanceOf(SettingsError);
        return (err as SettingsError).problems.join("\n");
      }
    };
    const noFiles = problems({ GRPC_SERVER_USE_TLS: "true" });
    expect(noFiles).to.include("GRPC_SERVER_TLS_CERT: required when GRPC_SERVER_USE_TLS=true");
    expect(noFiles).to.include("GRPC_SERVER_TLS_KEY: required when GRPC_SERVER_USE_TLS=true");
    expect(problems({ GRPC_CLIENT_TLS_CACERT: "/ca.pem" })).to.include(
      "GRPC_CLIENT_TLS_CACERT: mutual TLS requires GRPC_SERVER_USE_TLS=true",
    );
    expect(
      problems({
        GRPC_SERVER_USE_TLS: "1",
        GRPC_SERVER_TLS_CERT: "/c",
        GRPC_SERVER_TLS_KEY: "/k",
        GRPC_CLIENT_TLS_SAN: "x",
      }),
    ).to.include("GRPC_CLIENT_TLS_SAN: the client name check requires GRPC_CLIENT_TLS_CACERT");
    expect(problems({ GRPC_SERVER_USE_TLS: "maybe" })).to.include(
      'GRPC_SERVER_USE_TLS="maybe": expected a boolean',
    );
  });
});
