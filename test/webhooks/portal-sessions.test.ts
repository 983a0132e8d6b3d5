import { randomBytes } from "node:crypto";
import { rm } from "node:fs/promises";
import { expect } from "chai";
import { decodeProtectedHeader, SignJWT } from "jose";
import { deadLetterOf } from "../support/dead-letter-fixture.js";
import { DeliveryEnv } from "../support/delivery-env.js";
import { eventually, sql } from "../support/poison.js";
import { fixturePortalAssets, parameterisedCalls } from "../support/portal.js";
import { Receiver } from "../support/receiver.js";
import { startWebhooks } from "../support/webhooks-server.js";

const FRAME_ANCESTORS = "'self' https://app.example.com";
const ALL_FEATURES = ["endpoints", "deliveries", "replay", "recovery", "test-events", "secrets"];
/** Least privilege: the signing secret only when the creator asks for it. */
const DEFAULT_FEATURES = ALL_FEATURES.filter((f) => f !== "secrets");

/**
 * Consumer portal sessions on the real stack (PostgreSQL, NATS JetStream, the Temporal dev
 * server), authentication off: session tokens scoped like tenant-scoped JWTs, features,
 * revocation, expiry, tampering, bad input, the page's headers, a second API process.
 */
describe("consumer portal sessions (API without JWT auth)", function () {
  this.timeout(240_000);
  const env = new DeliveryEnv();
  const receivers: Record<"a" | "b", Receiver> = {} as never;
  let assets: string;
  let tenantA: { id: string; uid: string };
  let tenantB: { id: string; uid: string };
  let configA: string;
  let configB: string;
  let webhookA: string;
  let webhookB: string;
  let deadLetterB: string;
  let recoveryB: string;
  let sessionA: { id: string; token: string; url: string; expiresAt: string; createdAt: string };
  let sessionB: { id: string; token: string };

  const call = (
    method: string,
    p: string,
    body?: unknown,
    token?: string,
    headers: Record<string, string> = {},
  ) => env.api.call(method, p, body, { ...headers, ...(token ? { authorization: `Bearer ${token}` } : {}) });
  const created = async (p: string, body: unknown) => {
    const r = await call("POST", p, body);
    expect(r.status, `${p}: ${r.text}`).to.be.oneOf([200, 201]);
    return r.status === 201 ? r.body : r.body.data;
  };
  const session = async (tenant: string, body: unknown = {}) =>
    created(`/tenants/${tenant}/portal-sessions`, body) as Promise<typeof sessionA>;
  const sessionRows = async () =>
    (await sql<{ n: number }>(env.api, "SELECT count(*)::int AS n FROM portal_sessions"))[0]!.n;
  /** Waits for the first attempt row of an event of `tenant` to `config`; returns its delivery. */
  const delivered = async (config: string, tenant: string) => {
    const ik = `ik-${randomBytes(4).toString("hex")}`;
    await env.publish(env.event({ app: "shop", type: "ORDER_PAID", idempotency_key: ik, tenant }));
    let webhook = "";
    await eventually(
      `a delivery to ${config}`,
      async () => {
        const rows = await sql<{ webhook_id: string }>(
          env.api,
          "SELECT webhook_id FROM attempts WHERE config_id = $1 AND status = 'success'",
          [config],
        );
        webhook = rows[0]?.webhook_id ?? "";
        return webhook !== "";
      },
      30_000,
    );
    return webhook;
  };

  before(async () => {
    assets = await fixturePortalAssets();
    await env.start([
      "--portal-assets-dir",
      assets,
      "--portal-logo-hosts",
      "cdn.example.com, img.example.org:8443",
      "--portal-frame-ancestors",
      FRAME_ANCESTORS,
    ]);
    for (const name of ["a", "b"] as const) receivers[name] = await new Receiver().start();
    tenantA = await created("/tenants", { uid: "acme", name: "Acme" });
    tenantB = await created("/tenants", { uid: "globex", name: "Globex" });
    configA = (
      await created("/configs", { endpoint: receivers.a.url, eventTypes: ["shop.*"], tenantId: tenantA.id })
    ).id;
    configB = (
      await created("/configs", { endpoint: receivers.b.url, eventTypes: ["shop.*"], tenantId: tenantB.id })
    ).id;
    webhookA = await delivered(configA, "acme");
    webhookB = await delivered(configB, "globex");
    // B's dead letter: a config whose row cannot be used.
    const broken = await created("/configs", {
      endpoint: receivers.b.url,
      eventTypes: ["broken.*"],
      tenantId: tenantB.id,
    });
    deadLetterB = await deadLetterOf(env, broken.id, { app: "broken", type: "x", tenant: "globex" });
    const recovery = await call(
      "POST",
      `/configs/${configB}/recover`,
      { since: "2020-01-01T00:00:00Z" },
      undefined,
      {
        "idempotency-key": "r-b",
      },
    );
    expect(recovery.status, recovery.text).to.be.oneOf([200, 202]);
    recoveryB = recovery.body.data.id;
    sessionA = await session(tenantA.id, { features: ALL_FEATURES });
    sessionB = await session("uid:globex");
  });

  after(async () => {
    for (const r of Object.values(receivers)) await r?.stop();
    await env.stop();
    if (assets) await rm(assets, { recursive: true, force: true });
  });

  it("creates a session: 201 with its URL (token in the fragment), listed without its token, bootstrapped by /portal-sessions/current", async () => {
    expect(sessionA).to.include({ tenantId: tenantA.id, createdBy: null });
    expect(sessionA.url).to.equal(`${env.api.url}/portal/#token=${sessionA.token}`);
    expect(decodeProtectedHeader(sessionA.token)).to.include({ alg: "HS256", typ: "portal+jwt" });
    expect((sessionA as unknown as { features: string[] }).features).to.deep.equal(ALL_FEATURES);
    expect((sessionA as unknown as { theme: object }).theme).to.deep.equal({});
    // Default lifetime: 1 h (whole seconds, as the token's exp).
    const lifetime = Date.parse(sessionA.expiresAt) - Date.parse(sessionA.createdAt);
    expect(lifetime).to.be.within(3_599_000, 3_600_000);

    const current = await call("GET", "/portal-sessions/current", undefined, sessionA.token);
    expect(current.status, current.text).to.equal(200);
    expect(current.body).to.deep.equal({
      id: sessionA.id,
      tenant: { id: tenantA.id, uid: "acme", name: "Acme" },
      features: ALL_FEATURES,
      theme: {},
      expiresAt: sessionA.expiresAt,
    });
    const listed = await call("GET", "/tenants/uid:acme/portal-sessions");
    expect(listed.status, listed.text).to.equal(200);
    expect(listed.body.cursor.data.map((s: { id: string }) => s.id)).to.include(sessionA.id);
    expect(listed.text).to.not.include(sessionA.token);
    expect(listed.body.cursor.data[0]).to.not.have.property("token");

    const themed = await session(tenantA.id, {
      expiresIn: "24h",
      features: ["deliveries", "endpoints"],
      theme: { brandColor: "#0a7cFF", logoUrl: "https://img.example.org:8443/logo.svg" },
    });
    const bootstrap = (await call("GET", "/portal-sessions/current", undefined, themed.token)).body;
    expect(bootstrap.features).to.deep.equal(["deliveries", "endpoints"]);
    expect(bootstrap.theme).to.deep.equal({
      brandColor: "#0a7cFF",
      logoUrl: "https://img.example.org:8443/logo.svg",
    });

    // The operator's metadata of the tenant is not shown to its portal session.
    const labelled = await call("PATCH", `/tenants/${tenantA.id}`, {
      metadata: { plan: "gold", crm: "acct-17" },
    });
    expect(labelled.status, labelled.text).to.equal(200);
    const seen = await call("GET", `/tenants/${tenantA.id}`, undefined, sessionA.token);
    expect(seen.status, seen.text).to.equal(200);
    expect(seen.body.data).to.include({ id: tenantA.id, uid: "acme", name: "Acme" });
    expect(seen.body.data).to.not.have.property("metadata");
    expect(seen.text).to.not.include("acct-17");
    expect((await call("GET", `/tenants/${tenantA.id}`)).body.data.metadata).to.deep.equal({
      plan: "gold",
      crm: "acct-17",
    });

    // Without features asked for: every one but the signing secret's.
    const plain = await session(tenantA.id);
    expect((plain as unknown as { features: string[] }).features).to.deep.equal(DEFAULT_FEATURES);
    const refused = await call("GET", `/configs/${configA}/secret`, undefined, plain.token);
    expect(refused.status, refused.text).to.equal(403);
    expect(refused.body.errorMessage).to.contain('lacks the feature "secrets"');

    const anonymous = await call("GET", "/portal-sessions/current");
    expect(anonymous.status).to.equal(401);
    expect(anonymous.body.errorCode).to.equal("UNAUTHORIZED");
  });

  it("scopes a portal token to its tenant: 404 on every route of the OpenAPI document with B's ids, 403 on routes spanning tenants or beyond the portal", async () => {
    const doc = (await call("GET", "/openapi.json")).body;
    const calls = parameterisedCalls(
      doc,
      {
        "/configs/": { id: configB, recoveryId: recoveryB, key: "any-key" },
        "/webhooks/": { webhookId: webhookB },
        "/dead-letters/": { id: deadLetterB },
        "/tenants/": { tenant: tenantB.id, id: sessionB.id },
      },
      // The event catalog is deployment-wide: no tenant owns a type.
      (template) => template.startsWith("/event-types/"),
    );
    expect(calls.length).to.be.greaterThan(20);
    for (const c of calls) {
      for (const p of [c.path, c.path.replace(tenantB.id, "uid:globex")]) {
        const r = await call(c.method, p, undefined, sessionA.token);
        expect(r.status, `${c.method} ${p}: ${r.text}`).to.equal(404);
        expect(r.body.errorCode).to.equal("NOT_FOUND");
      }
    }
    // B's own session reaches them.
    expect((await call("GET", `/configs/${configB}`, undefined, sessionB.token)).status).to.equal(200);
    expect((await call("GET", `/webhooks/${webhookB}`, undefined, sessionB.token)).status).to.equal(200);

    for (const [method, p, body] of [
      ["GET", "/tenants"],
      ["POST", "/tenants", { uid: "sneaky" }],
      ["PATCH", `/tenants/${tenantA.id}`, { name: "mine" }],
      ["DELETE", "/tenants/uid:acme"],
      ["POST", `/tenants/${tenantA.id}/portal-sessions`, {}],
      ["POST", "/tenants/uid:acme/portal-sessions", { expiresIn: "24h" }],
      ["GET", "/tenants/uid:acme/portal-sessions"],
      ["DELETE", `/tenants/uid:acme/portal-sessions/${sessionA.id}`],
      ["POST", "/events", env.event({ app: "shop", type: "ORDER_PAID" })],
      ["GET", "/dead-letters"],
      ["PUT", "/event-types/shop.order_paid", { description: "x" }],
      ["DELETE", "/event-types/shop.order_paid"],
    ] as const) {
      const r = await call(method, p, body, sessionA.token);
      expect(r.status, `${method} ${p}: ${r.text}`).to.equal(403);
      expect(r.body.errorCode).to.equal("FORBIDDEN");
    }
    expect(
      (await call("GET", "/tenants/uid:acme/portal-sessions")).body.cursor.data.length,
    ).to.be.greaterThan(0);

    // Its own tenant's resources: listed and reachable.
    const listed = (await call("GET", "/configs", undefined, sessionA.token)).body.cursor.data;
    expect(listed.map((c: { id: string }) => c.id)).to.deep.equal([configA]);
    for (const p of [
      `/tenants/${tenantA.id}`,
      `/configs/${configA}`,
      `/configs/${configA}/stats`,
      `/configs/${configA}/attempts`,
      `/configs/${configA}/deliveries`,
      `/webhooks/${webhookA}`,
      `/webhooks/${webhookA}/attempts`,
      `/configs/${configA}/secret`,
      "/event-types",
    ]) {
      const r = await call("GET", p, undefined, sessionA.token);
      expect(r.status, `${p}: ${r.text}`).to.equal(200);
    }
    const own = await call(
      "POST",
      "/configs",
      { endpoint: receivers.a.url, eventTypes: ["own.*"] },
      sessionA.token,
    );
    expect(own.status, own.text).to.equal(200);
    expect(own.body.data.tenantId).to.equal(tenantA.id);
    const removed = await call("DELETE", `/configs/${own.body.data.id}`, undefined, sessionA.token);
    expect(removed.status, removed.text).to.equal(200);
  });

  it("answers 403 naming the feature for the routes of a feature the session was not given", async () => {
    const endpointsOnly = await session(tenantA.id, { features: ["endpoints"] });
    const deliveriesOnly = await session(tenantA.id, { features: ["deliveries"] });
    const byFeature: [string, string, string, unknown?][] = [
      ["deliveries", "GET", `/configs/${configA}/attempts`],
      ["deliveries", "GET", `/configs/${configA}/deliveries`],
      ["deliveries", "GET", `/webhooks/${webhookA}`],
      ["deliveries", "GET", `/webhooks/${webhookA}/attempts`],
      ["replay", "POST", `/webhooks/${webhookA}/replay`],
      ["replay", "POST", `/webhooks/${webhookA}/cancel`],
      ["recovery", "POST", `/configs/${configA}/recover`, { since: "2020-01-01T00:00:00Z" }],
      ["recovery", "GET", `/configs/${configA}/recoveries`],
      ["test-events", "POST", `/configs/${configA}/test`],
      ["secrets", "GET", `/configs/${configA}/secret`],
      ["secrets", "PUT", `/configs/${configA}/secret/change`, {}],
    ];
    for (const [feature, method, p, body] of byFeature) {
      const r = await call(method, p, body, endpointsOnly.token);
      expect(r.status, `${method} ${p}: ${r.text}`).to.equal(403);
      expect(r.body.errorMessage).to.contain(`lacks the feature "${feature}"`);
    }
    for (const [method, p] of [
      ["GET", "/configs"],
      ["GET", `/configs/${configA}`],
      ["GET", `/configs/${configA}/stats`],
      ["GET", "/event-types"],
    ]) {
      expect((await call(method!, p!, undefined, endpointsOnly.token)).status, p).to.equal(200);
      const refused = await call(method!, p!, undefined, deliveriesOnly.token);
      expect(refused.status, p).to.equal(403);
      expect(refused.body.errorMessage).to.contain('lacks the feature "endpoints"');
    }
    expect((await call("GET", `/webhooks/${webhookA}`, undefined, deliveriesOnly.token)).status).to.equal(
      200,
    );
    // Nothing was changed by the refused writes.
    const secret = (await call("GET", `/configs/${configA}/secret`)).body.data.secret;
    expect((await call("GET", `/configs/${configA}/secret`)).body.data.secret).to.equal(secret);
    expect((await call("GET", `/configs/${configA}/recoveries`)).body.data).to.deep.equal([]);
  });

  it("answers SESSION_REVOKED on every route once the session is revoked", async () => {
    const s = await session("uid:acme");
    expect((await call("GET", "/configs", undefined, s.token)).status).to.equal(200);
    const revoked = await call("DELETE", `/tenants/uid:acme/portal-sessions/${s.id}`);
    expect(revoked.status, revoked.text).to.equal(204);
    for (const p of ["/portal-sessions/current", "/configs", `/configs/${configA}`, "/tenants"]) {
      const r = await call("GET", p, undefined, s.token);
      expect(r.status, `${p}: ${r.text}`).to.equal(401);
      expect(r.body.errorCode).to.equal("SESSION_REVOKED");
    }
    expect((await call("DELETE", `/tenants/uid:acme/portal-sessions/${s.id}`)).status).to.equal(204);
    const live = (await call("GET", "/tenants/uid:acme/portal-sessions")).body.cursor.data;
    expect(live.map((x: { id: string }) => x.id)).to.not.include(s.id);
    // Another tenant's session, an unknown id, not an id: 404.
    for (const id of [sessionB.id, "00000000-0000-4000-8000-000000000000", "nope"]) {
      const r = await call("DELETE", `/tenants/uid:acme/portal-sessions/${id}`);
      expect(r.status, `${id}: ${r.text}`).to.equal(404);
    }
    expect((await call("GET", "/portal-sessions/current", undefined, sessionB.token)).status).to.equal(200);
  });

  it("answers SESSION_EXPIRED once the session has expired, SESSION_REVOKED if it was revoked as well", async () => {
    const s = await session(tenantA.id, { expiresIn: "1s" });
    expect(Date.parse(s.expiresAt) - Date.parse(s.createdAt)).to.be.at.most(1000);
    const other = await session(tenantA.id, { expiresIn: "1s" });
    while (Date.now() <= Date.parse(s.expiresAt)) await new Promise((r) => setTimeout(r, 100));
    for (const p of ["/portal-sessions/current", "/configs", `/webhooks/${webhookA}`]) {
      const r = await call("GET", p, undefined, s.token);
      expect(r.status, `${p}: ${r.text}`).to.equal(401);
      expect(r.body.errorCode).to.equal("SESSION_EXPIRED");
      expect(r.body.errorMessage).to.contain("expired");
    }
    const live = (await call("GET", "/tenants/uid:acme/portal-sessions")).body.cursor.data;
    expect(live.map((x: { id: string }) => x.id)).to.not.include(s.id);
    expect((await call("DELETE", `/tenants/uid:acme/portal-sessions/${other.id}`)).status).to.equal(204);
    const both = await call("GET", "/portal-sessions/current", undefined, other.token);
    expect(both.body.errorCode).to.equal("SESSION_REVOKED");
  });

  it("answers UNAUTHORIZED to a tampered, forged or orphaned portal token", async () => {
    const [header, payload, signature] = sessionA.token.split(".") as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, "base64url").toString());
    const reencoded = (c: object) => Buffer.from(JSON.stringify(c)).toString("base64url");
    const kid = decodeProtectedHeader(sessionA.token).kid!;
    const forged = (key: Uint8Array, headerKid: string) =>
      new SignJWT({ tenant: tenantB.id, features: ALL_FEATURES })
        .setProtectedHeader({ alg: "HS256", typ: "portal+jwt", kid: headerKid })
        .setIssuer("webhooks-portal")
        .setAudience("webhooks-portal")
        .setSubject(sessionB.id)
        .setExpirationTime("10m")
        .sign(key);
    const noneHeader = reencoded({ alg: "none", typ: "portal+jwt", kid });
    const tampered = {
      "signature changed": `${header}.${payload}.${signature.startsWith("A") ? "B" : "A"}${signature.slice(1)}`,
      "tenant changed": `${header}.${reencoded({ ...claims, tenant: tenantB.id })}.${signature}`,
      "session changed": `${header}.${reencoded({ ...claims, sub: sessionB.id })}.${signature}`,
      "expiry extended": `${header}.${reencoded({ ...claims, exp: claims.exp + 86_400 })}.${signature}`,
      "alg none": `${noneHeader}.${payload}.`,
      "signed with another key": await forged(randomBytes(32), kid),
      "unknown key id": await forged(randomBytes(32), "not-in-the-ring"),
    };
    for (const [what, token] of Object.entries(tampered)) {
      for (const p of ["/portal-sessions/current", `/configs/${configB}`]) {
        const r = await call("GET", p, undefined, token);
        expect(r.status, `${what} ${p}: ${r.text}`).to.equal(401);
        expect(r.body.errorCode, what).to.equal("UNAUTHORIZED");
      }
    }
    // A session whose tenant was deleted went with it.
    const initech = await created("/tenants", { uid: "initech" });
    const orphan = await session(initech.id);
    expect((await call("DELETE", `/tenants/${initech.id}`)).status).to.equal(200);
    const r = await call("GET", "/portal-sessions/current", undefined, orphan.token);
    expect(r.status).to.equal(401);
    expect(r.body.errorCode).to.equal("UNAUTHORIZED");
  });

  it("refuses bad input with a 400 naming the field, storing nothing", async () => {
    const before = await sessionRows();
    const bad: [unknown, string][] = [
      [{ expiresIn: "soon" }, "expiresIn"],
      [{ expiresIn: "25h" }, "expiresIn must be whole seconds from 1s to 24h"],
      [{ expiresIn: "24h1s" }, "expiresIn"],
      [{ expiresIn: "500ms" }, "expiresIn"],
      [{ expiresIn: "0" }, "expiresIn"],
      [{ expiresIn: "-1h" }, "expiresIn"],
      [{ expiresIn: 3600 }, "expiresIn"],
      [{ features: ["billing"] }, "features"],
      [{ features: [] }, "features"],
      [{ features: ["endpoints", "endpoints"] }, "features"],
      [{ features: "endpoints" }, "features"],
      [{ theme: { brandColor: "red" } }, "theme.brandColor"],
      [{ theme: { brandColor: "#12345g" } }, "theme.brandColor"],
      [{ theme: { logoUrl: "https://evil.example.com/x.png" } }, "theme.logoUrl"],
      [{ theme: { logoUrl: "http://cdn.example.com/x.png" } }, "theme.logoUrl"],
      [{ theme: { logoUrl: "https://img.example.org/x.png" } }, "theme.logoUrl"],
      [{ theme: { logoUrl: "not a url" } }, "theme.logoUrl"],
      [{ theme: { font: "Comic Sans" } }, "font"],
      [{ theme: "dark" }, "theme"],
      [{ extra: 1 }, "extra"],
      [[], "body must be a JSON object"],
      ["[", "JSON"],
    ];
    for (const [body, words] of bad) {
      const r = await call("POST", "/tenants/uid:acme/portal-sessions", body);
      expect(r.status, `${JSON.stringify(body)}: ${r.text}`).to.equal(400);
      expect(r.body.errorCode).to.equal("VALIDATION");
      expect(r.body.errorMessage, JSON.stringify(body)).to.contain(words);
    }
    const query = await call("POST", "/tenants/uid:acme/portal-sessions?expiresIn=1h", {});
    expect(query.status).to.equal(400);
    expect(query.body.errorMessage).to.contain("expiresIn");
    for (const tenant of ["uid:nobody", "00000000-0000-4000-8000-000000000000", "nobody"]) {
      const r = await call("POST", `/tenants/${tenant}/portal-sessions`, {});
      expect(r.status, r.text).to.equal(404);
    }
    expect(await sessionRows()).to.equal(before);
    // The edges are accepted.
    await session(tenantA.id, {
      expiresIn: "1h30m",
      theme: { logoUrl: "https://cdn.example.com/a/b.png?v=2" },
    });
    expect(await sessionRows()).to.equal(before + 1);
  });

  it("serves /portal with the strict CSP, nosniff and no referrer, index.html for the page's routes", async () => {
    const csp =
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' https://cdn.example.com https://img.example.org:8443; " +
      "connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'self' https://app.example.com";
    const page = async (p: string, init: RequestInit = {}) => {
      const res = await fetch(env.api.url + p, { redirect: "manual", ...init });
      return { res, text: await res.text() };
    };
    for (const p of [
      "/portal/",
      "/portal/index.html",
      "/portal/endpoints/123",
      "/portal/deliveries/x/y?tab=2",
    ]) {
      const { res, text } = await page(p);
      expect(res.status, p).to.equal(200);
      expect(res.headers.get("content-type"), p).to.match(/^text\/html/);
      expect(text, p).to.contain("portal fixture");
      expect(res.headers.get("content-security-policy"), p).to.equal(csp);
      expect(res.headers.get("x-content-type-options"), p).to.equal("nosniff");
      expect(res.headers.get("referrer-policy"), p).to.equal("no-referrer");
    }
    const script = await page("/portal/app.js");
    expect(script.res.status).to.equal(200);
    expect(script.res.headers.get("content-type")).to.match(/javascript/);
    expect(script.res.headers.get("content-security-policy")).to.equal(csp);
    const missing = await page("/portal/assets/gone.js");
    expect(missing.res.status).to.equal(404);
    expect(missing.res.headers.get("content-security-policy")).to.equal(csp);
    const bare = await page("/portal");
    expect(bare.res.status).to.equal(301);
    expect(bare.res.headers.get("location")).to.equal("/portal/");
    const posted = await page("/portal/", { method: "POST" });
    expect(posted.res.status).to.equal(405);
    // The page needs no token: it reads it from the URL fragment.
    expect((await page("/portal/", { headers: { authorization: "Bearer nonsense" } })).res.status).to.equal(
      200,
    );
  });

  it("accepts a token in a second API process on the same database; that process answers 503 for a page not built", async () => {
    const second = await startWebhooks({
      db: env.api.db,
      args: [
        "--portal-assets-dir",
        `${assets}-not-built`,
        "--portal-base-url",
        "https://hooks.example.com/",
        "--nats-stream",
        env.stream,
        "--audit-topic",
        "",
      ],
    });
    try {
      const current = await second.call("GET", "/portal-sessions/current", undefined, {
        authorization: `Bearer ${sessionA.token}`,
      });
      expect(current.status, current.text).to.equal(200);
      expect(current.body.id).to.equal(sessionA.id);
      const made = await second.call("POST", "/tenants/uid:acme/portal-sessions", {});
      expect(made.status, made.text).to.equal(201);
      expect(made.body.url).to.equal(`https://hooks.example.com/portal/#token=${made.body.token}`);
      expect((await call("GET", "/configs", undefined, made.body.token)).status).to.equal(200);
      // Revoked through one process, refused by the other at once.
      expect(
        (await second.call("DELETE", `/tenants/uid:acme/portal-sessions/${made.body.id}`)).status,
      ).to.equal(204);
      expect((await call("GET", "/configs", undefined, made.body.token)).body.errorCode).to.equal(
        "SESSION_REVOKED",
      );

      const res = await fetch(`${second.url}/portal/`);
      expect(res.status).to.equal(503);
      const body = (await res.json()) as { errorCode: string; errorMessage: string };
      expect(body.errorCode).to.equal("UNAVAILABLE");
      expect(body.errorMessage).to.contain("the portal page is not built");
      expect(res.headers.get("content-security-policy")).to.contain("frame-ancestors 'none'");
    } finally {
      await second.stop();
    }
  });
});
