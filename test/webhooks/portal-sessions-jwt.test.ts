import { randomBytes } from "node:crypto";
import { expect } from "chai";
import { connect, type NatsConnection } from "nats";
import { TestJwks } from "../support/jwks.js";
import { startWebhooks, type WebhooksUnderTest } from "../support/webhooks-server.js";

/**
 * Portal sessions with JWT authentication on (a real JWKS): who may create them, portal
 * tokens accepted beside the operator's JWTs, and the audit trail naming the session.
 */
describe("consumer portal sessions with JWT auth (--auth-jwks-url, audit on NATS JetStream)", function () {
  this.timeout(120_000);
  let api: WebhooksUnderTest;
  let jwks: TestJwks;
  let admin: string;
  let tenantA: { id: string };
  let tenantB: { id: string };
  const auditTopic = `audit-${randomBytes(4).toString("hex")}`;
  const stream = `TEST_${randomBytes(4).toString("hex").toUpperCase()}`;

  const jwt = (claims: Record<string, unknown>) => jwks.sign(claims);
  const call = (method: string, p: string, bearer: string | undefined, body?: unknown) =>
    api.call(method, p, body, bearer ? { authorization: `Bearer ${bearer}` } : {});

  before(async () => {
    jwks = await TestJwks.start();
    api = await startWebhooks({
      // The flags' environment variables work as the flags do.
      env: { PORTAL_LOGO_HOSTS: "cdn.example.com", PORTAL_BASE_URL: "https://hooks.example.com/webhooks/" },
      args: [
        ...jwks.args,
        "--audit-topic",
        auditTopic,
        "--nats-stream",
        stream,
        "--portal-assets-dir",
        "/nonexistent/portal",
      ],
    });
    admin = await jwt({ sub: "admin" });
    tenantA = (await call("POST", "/tenants", admin, { uid: "acme" })).body.data;
    tenantB = (await call("POST", "/tenants", admin, { uid: "globex" })).body.data;
    for (const t of [tenantA, tenantB]) {
      const r = await call("POST", "/configs", admin, {
        endpoint: "https://hooks.example.com/x",
        eventTypes: ["shop.*"],
        tenantId: t.id,
      });
      expect(r.status, r.text).to.equal(200);
    }
  });

  after(async () => {
    await api?.stop();
    jwks?.close();
    const nc = await connect({ servers: "nats://127.0.0.1:4222" });
    await (await nc.jetstreamManager()).streams.delete(stream).catch(() => {});
    await nc.close();
  });

  it("lets a deployment-wide write token create sessions; a tenant-scoped token only for its tenant; a read token or a portal token never", async () => {
    const made = await call("POST", "/tenants/uid:acme/portal-sessions", admin, {
      expiresIn: "10m",
      theme: { logoUrl: "https://cdn.example.com/acme.png" },
    });
    expect(made.status, made.text).to.equal(201);
    expect(made.body.createdBy).to.equal("admin");
    expect(made.body.url).to.equal(`https://hooks.example.com/webhooks/portal/#token=${made.body.token}`);

    const scopedA = await jwt({ sub: "acme-backend", tenant: "acme" });
    const forB = await call("POST", `/tenants/${tenantB.id}/portal-sessions`, scopedA, {});
    expect(forB.status, forB.text).to.equal(404);
    expect((await call("POST", "/tenants/uid:globex/portal-sessions", scopedA, {})).status).to.equal(404);
    expect((await call("GET", "/tenants/uid:globex/portal-sessions", scopedA)).status).to.equal(404);
    const own = await call("POST", "/tenants/uid:acme/portal-sessions", scopedA, {});
    expect(own.status, own.text).to.equal(201);
    expect(own.body.createdBy).to.equal("acme-backend");
    const listed = await call("GET", "/tenants/uid:acme/portal-sessions", scopedA);
    expect(listed.body.cursor.data.map((s: { id: string }) => s.id)).to.include.members([
      made.body.id,
      own.body.id,
    ]);

    const reader = await jwt({ sub: "dashboard", scope: "webhooks:read" });
    const read = await call("POST", "/tenants/uid:acme/portal-sessions", reader, {});
    expect(read.status).to.equal(403);
    expect(read.body.errorMessage).to.contain("webhooks:write");
    const byPortal = await call("POST", "/tenants/uid:acme/portal-sessions", made.body.token, {});
    expect(byPortal.status).to.equal(403);
    const count = await call("GET", "/tenants/uid:acme/portal-sessions", admin);
    expect(count.body.cursor.data.length).to.equal(2);
  });

  it("accepts a portal token beside the JWTs, scoped to its tenant; refuses a tampered, revoked or expired one with the session codes", async () => {
    const s = (await call("POST", "/tenants/uid:acme/portal-sessions", admin, {})).body;
    const current = await call("GET", "/portal-sessions/current", s.token);
    expect(current.status, current.text).to.equal(200);
    expect(current.body.tenant.id).to.equal(tenantA.id);
    const configs = await call("GET", "/configs", s.token);
    expect(configs.status, configs.text).to.equal(200);
    expect(configs.body.cursor.data.map((c: { tenantId: string }) => c.tenantId)).to.deep.equal([tenantA.id]);
    const b = (await call("GET", "/tenants/uid:globex/configs", admin)).body.cursor.data[0];
    expect((await call("GET", `/configs/${b.id}`, s.token)).status).to.equal(404);
    expect((await call("GET", "/tenants", s.token)).status).to.equal(403);
    // A JWT on the bootstrap route is not a portal session.
    const notPortal = await call("GET", "/portal-sessions/current", admin);
    expect(notPortal.status).to.equal(401);
    expect(notPortal.body.errorCode).to.equal("UNAUTHORIZED");

    const [h, p, sig] = s.token.split(".");
    const tampered = await call(
      "GET",
      "/configs",
      `${h}.${p}.${sig.startsWith("A") ? "B" : "A"}${sig.slice(1)}`,
    );
    expect(tampered.status).to.equal(401);
    expect(tampered.body.errorCode).to.equal("UNAUTHORIZED");
    expect(tampered.body.errorMessage).to.contain("portal session token");

    expect((await call("DELETE", `/tenants/uid:acme/portal-sessions/${s.id}`, admin)).status).to.equal(204);
    expect((await call("GET", "/configs", s.token)).body.errorCode).to.equal("SESSION_REVOKED");

    const short = (await call("POST", "/tenants/uid:acme/portal-sessions", admin, { expiresIn: "1s" })).body;
    while (Date.now() <= Date.parse(short.expiresAt)) await new Promise((r) => setTimeout(r, 100));
    const expired = await call("GET", "/portal-sessions/current", short.token);
    expect(expired.status).to.equal(401);
    expect(expired.body.errorCode).to.equal("SESSION_EXPIRED");

    // The JWTs work as before; no token is still a 401.
    expect((await call("GET", "/configs", admin)).status).to.equal(200);
    expect((await call("GET", "/configs", undefined)).status).to.equal(401);
    // The page needs no token; this process has no built page.
    const page = await fetch(`${api.url}/portal/`);
    expect(page.status).to.equal(503);
  });

  it("records portal calls in the audit trail with the session as the subject", async () => {
    const s = (await call("POST", "/tenants/uid:acme/portal-sessions", admin, {})).body;
    expect((await call("GET", "/configs", s.token)).status).to.equal(200);
    let nc: NatsConnection | undefined;
    try {
      nc = await connect({ servers: "nats://127.0.0.1:4222" });
      const consumer = await nc.jetstream().consumers.get(stream, { filterSubjects: auditTopic });
      const subject = `portal-session:${s.id}`;
      const events: { payload: Record<string, unknown> }[] = [];
      const deadline = Date.now() + 15_000;
      while (Date.now() < deadline && !events.some((e) => e.payload.subject === subject)) {
        const m = await consumer.next({ expires: 1000 });
        if (m) {
          expect(m.string()).to.not.include(s.token);
          events.push(m.json());
        }
      }
      expect(events.find((e) => e.payload.subject === subject)?.payload).to.include({
        method: "GET",
        path: "/configs",
        status: 200,
      });
      expect(events.some((e) => e.payload.subject === "admin" && e.payload.method === "POST")).to.equal(true);
    } finally {
      await nc?.close();
    }
  });
});
