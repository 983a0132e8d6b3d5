import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import { exportJWK, generateKeyPair, type JWK, SignJWT } from "jose";

type KeyLike = Awaited<ReturnType<typeof generateKeyPair>>["privateKey"];

import { connect, type NatsConnection } from "nats";
import { startWebhooks, type WebhooksUnderTest } from "../support/webhooks-server.js";

const ISSUER = "https://issuer.test/";
const AUDIENCE = "webhooks-api";

/** A real JWKS endpoint serving one RSA public key. */
async function startJwks(jwk: JWK): Promise<{ url: string; server: Server }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/jwks.json`, server };
}

describe("configs API authentication and audit (real JWKS, signed tokens, NATS JetStream)", function () {
  this.timeout(120_000);
  let api: WebhooksUnderTest;
  let jwks: { url: string; server: Server };
  let key: KeyLike;
  let otherKey: KeyLike;
  const auditTopic = `audit-${randomBytes(4).toString("hex")}`;
  const stream = `TEST_${randomBytes(4).toString("hex").toUpperCase()}`;

  const token = (
    claims: Record<string, unknown>,
    opts: { key?: KeyLike; exp?: string; iss?: string; aud?: string } = {},
  ) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: "RS256", kid: "k1" })
      .setIssuer(opts.iss ?? ISSUER)
      .setAudience(opts.aud ?? AUDIENCE)
      .setSubject(String(claims.sub ?? "alice"))
      .setIssuedAt()
      .setExpirationTime(opts.exp ?? "5m")
      .sign(opts.key ?? key);

  const call = (method: string, path: string, bearer?: string, body?: unknown) =>
    api.call(method, path, body, bearer ? { authorization: `Bearer ${bearer}` } : {});

  before(async () => {
    const pair = await generateKeyPair("RS256");
    key = pair.privateKey;
    otherKey = (await generateKeyPair("RS256")).privateKey;
    jwks = await startJwks({ ...(await exportJWK(pair.publicKey)), kid: "k1", alg: "RS256", use: "sig" });
    api = await startWebhooks({
      args: [
        "--auth-jwks-url",
        jwks.url,
        "--auth-issuer",
        ISSUER,
        "--auth-audience",
        AUDIENCE,
        "--audit-topic",
        auditTopic,
        "--nats-stream",
        stream,
      ],
    });
  });

  after(async () => {
    await api?.stop();
    jwks?.server.close();
    const nc = await connect({ servers: "nats://127.0.0.1:4222" });
    await (await nc.jetstreamManager()).streams.delete(stream).catch(() => {});
    await nc.close();
  });

  it("refuses a call without a token with 401, a challenge and a JSON body", async () => {
    const res = await fetch(`${api.url}/configs`);
    expect(res.status).to.equal(401);
    expect(res.headers.get("www-authenticate")).to.match(/^Bearer/);
    expect(await res.json()).to.deep.equal({
      errorCode: "UNAUTHORIZED",
      errorMessage: "missing Authorization: Bearer token",
    });
  });

  it("refuses malformed, expired, foreign, wrong-issuer and wrong-audience tokens with the reason", async () => {
    const cases: [string, string, RegExp][] = [
      ["malformed", "not-a-jwt", /invalid token/],
      ["expired", await token({ scope: "webhooks:read" }, { exp: "-1m" }), /token expired/],
      [
        "foreign key",
        await token({ scope: "webhooks:read" }, { key: otherKey }),
        /signature does not verify/,
      ],
      ["wrong issuer", await token({ scope: "webhooks:read" }, { iss: "https://evil.test/" }), /"iss"/],
      ["wrong audience", await token({ scope: "webhooks:read" }, { aud: "other" }), /"aud"/],
    ];
    for (const [what, bearer, message] of cases) {
      const r = await call("GET", "/configs", bearer);
      expect(r.status, what).to.equal(401);
      expect(r.body.errorCode, what).to.equal("UNAUTHORIZED");
      expect(r.body.errorMessage, what).to.match(message);
    }
    const basic = await api.call("GET", "/configs", undefined, { authorization: "Basic dXNlcjpwYXNz" });
    expect(basic.status).to.equal(401);
  });

  it("lets a read-scoped token read but not write (403)", async () => {
    const reader = await token({ sub: "reader", scope: "openid webhooks:read" });
    expect((await call("GET", "/configs", reader)).status).to.equal(200);
    const r = await call("POST", "/configs", reader, { endpoint: "https://x.test", eventTypes: ["a.b"] });
    expect(r.status).to.equal(403);
    expect(r.body).to.deep.equal({
      errorCode: "FORBIDDEN",
      errorMessage: "token lacks the scope webhooks:write",
    });
  });

  it("lets a write-scoped token (scp array form) read and write", async () => {
    const writer = await token({ sub: "writer", scp: ["webhooks:write"] });
    const created = await call("POST", "/configs", writer, {
      endpoint: "https://x.test",
      eventTypes: ["a.b"],
    });
    expect(created.status).to.equal(200);
    expect((await call("GET", `/configs/${created.body.data.id}`, writer)).status).to.equal(200);
  });

  it("puts the dead letters behind the same scopes: reading them needs read, replaying and deleting write", async () => {
    const id = "00000000-0000-4000-8000-000000000000";
    const reader = await token({ sub: "reader", scope: "webhooks:read" });
    const writer = await token({ sub: "writer", scope: "webhooks:write" });
    expect((await call("GET", "/dead-letters")).status).to.equal(401);
    expect((await call("GET", "/dead-letters", reader)).status).to.equal(200);
    expect((await call("GET", `/dead-letters/${id}`, reader)).status).to.equal(404);
    for (const [method, path] of [
      ["POST", `/dead-letters/${id}/replay`],
      ["DELETE", `/dead-letters/${id}`],
    ] as const) {
      expect((await call(method, path, reader)).body.errorCode, `${method} ${path}`).to.equal("FORBIDDEN");
      expect((await call(method, path, writer)).status, `${method} ${path}`).to.equal(404);
    }
  });

  it("asks the write scope to read a secret in clear; a read-scoped token sees configs masked", async () => {
    const reader = await token({ sub: "reader", scope: "webhooks:read" });
    const writer = await token({ sub: "writer", scope: "webhooks:write" });
    const created = await call("POST", "/configs", writer, {
      endpoint: "https://x.test",
      eventTypes: ["a.b"],
    });
    const { id, secret } = created.body.data;
    expect(secret).to.match(/^[A-Za-z0-9+/]{32}$/);
    const denied = await call("GET", `/configs/${id}/secret`, reader);
    expect(denied.status).to.equal(403);
    expect(denied.body.errorMessage).to.equal("token lacks the scope webhooks:write");
    expect((await call("GET", `/configs/${id}`, reader)).body.data.secret).to.equal("********");
    const read = await call("GET", `/configs/${id}/secret`, writer);
    expect(read.status).to.equal(200);
    expect(read.body.data).to.deep.equal({ secret });
  });

  it("keeps health, info and the OpenAPI document open", async () => {
    for (const path of ["/_healthcheck", "/_info", "/openapi.json"]) {
      expect((await fetch(api.url + path)).status, path).to.equal(200);
    }
  });

  it("publishes every API call to the audit topic without secrets", async () => {
    const writer = await token({ sub: "auditor", scope: "webhooks:write" });
    const created = await call("POST", "/configs", writer, {
      endpoint: "https://audit.test/x",
      eventTypes: ["a.b"],
    });
    const secret: string = created.body.data.secret;
    await call("GET", "/configs");
    let nc: NatsConnection | undefined;
    try {
      nc = await connect({ servers: "nats://127.0.0.1:4222" });
      const consumer = await nc.jetstream().consumers.get(stream, { filterSubjects: auditTopic });
      const events: { type: string; app: string; payload: Record<string, unknown> }[] = [];
      const deadline = Date.now() + 10_000;
      while (Date.now() < deadline) {
        const m = await consumer.next({ expires: 1000 });
        if (!m) {
          if (
            events.some((e) => e.payload.subject === "auditor") &&
            events.some((e) => e.payload.status === 401)
          )
            break;
          continue;
        }
        expect(m.string()).to.not.include(secret);
        events.push(m.json());
      }
      expect(events.every((e) => e.app === "webhooks" && e.type === "API_CALL")).to.equal(true);
      const post = events.find((e) => e.payload.subject === "auditor" && e.payload.method === "POST");
      expect(post?.payload).to.include({ path: "/configs", status: 200 });
      const refused = events.find((e) => e.payload.status === 401 && e.payload.method === "GET");
      expect(refused?.payload).to.include({ path: "/configs", subject: null });
      expect(events.find((e) => e.payload.status === 403)?.payload).to.include({ subject: "reader" });
    } finally {
      await nc?.close();
    }
  });
});
