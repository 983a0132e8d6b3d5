import { setTimeout as sleep } from "node:timers/promises";
import { expect } from "chai";
import { TestJwks } from "../support/jwks.js";
import { startWebhooks, type WebhooksUnderTest } from "../support/webhooks-server.js";

/**
 * What a tenant claim binds to, against the real API, PostgreSQL and a real JWKS: a uid
 * claim reaches only the tenant that held the uid when the token was issued, an id claim
 * survives renames, and --auth-require-tenant-claim keeps deployment-wide power to tokens
 * that carry the admin scope.
 */
describe("tenant claims: bound to the tenant, not to a reusable uid", function () {
  this.timeout(120_000);
  let jwks: TestJwks;
  const now = () => Math.floor(Date.now() / 1000);

  before(async () => {
    jwks = await TestJwks.start();
  });
  after(() => jwks?.close());

  describe("uid and id claims", () => {
    let api: WebhooksUnderTest;
    let admin: string;
    const call = (method: string, p: string, bearer: string, body?: unknown) =>
      api.call(method, p, body, { authorization: `Bearer ${bearer}` });

    before(async () => {
      api = await startWebhooks({ args: [...jwks.args, "--audit-topic", ""] });
      admin = await jwks.sign({ sub: "admin" });
    });
    after(() => api?.stop());

    it("refuses a uid token issued before its uid passed to another tenant; the id token follows its tenant", async () => {
      const first = (await call("POST", "/tenants", admin, { uid: "acme" })).body.data;
      await call("POST", "/configs", admin, {
        endpoint: "https://hooks.example.com/first",
        eventTypes: ["a.*"],
        tenantId: first.id,
      });
      // iat counts whole seconds: the token is a second younger than the tenant, and older
      // than the second tenant by another second.
      await sleep(1_100);
      const byUid = await jwks.sign({ sub: "acme-app", tenant: "acme" });
      const byId = await jwks.sign({ sub: "acme-app", tenant: first.id });
      expect((await call("GET", "/configs", byUid)).status).to.equal(200);
      // Issued before its tenant existed: refused as well.
      expect(
        (await call("GET", "/configs", await jwks.sign({ tenant: "acme" }, now() - 60))).status,
      ).to.equal(401);
      await sleep(1_100);

      // The uid is given up, and another tenant takes it.
      expect((await call("PATCH", `/tenants/${first.id}`, admin, { uid: "acme-old" })).status).to.equal(200);
      const second = (await call("POST", "/tenants", admin, { uid: "acme" })).body.data;
      await call("POST", "/configs", admin, {
        endpoint: "https://hooks.example.com/second",
        eventTypes: ["a.*"],
        tenantId: second.id,
      });

      const stale = await call("GET", "/configs", byUid);
      expect(stale.status, stale.text).to.equal(401);
      expect(stale.body.errorMessage).to.match(/issued before its tenant got the uid "acme"/);
      const fresh = await jwks.sign({ sub: "acme-app", tenant: "acme" });
      const seen = await call("GET", "/configs", fresh);
      expect(seen.body.cursor.data.map((c: { endpoint: string }) => c.endpoint)).to.deep.equal([
        "https://hooks.example.com/second",
      ]);
      const kept = await call("GET", "/configs", byId);
      expect(kept.body.cursor.data.map((c: { endpoint: string }) => c.endpoint)).to.deep.equal([
        "https://hooks.example.com/first",
      ]);
      // A rename that keeps the uid (name only) moves nothing.
      expect((await call("PATCH", `/tenants/${second.id}`, admin, { name: "Acme 2" })).status).to.equal(200);
      expect((await call("GET", "/configs", fresh)).status).to.equal(200);
    });

    it("refuses a uid claim without iat, naming the way out; accepts an id claim without it", async () => {
      const t = (await call("POST", "/tenants", admin, { uid: "globex" })).body.data;
      const noIat = await call("GET", "/configs", await jwks.sign({ tenant: "globex" }, false));
      expect(noIat.status, noIat.text).to.equal(401);
      expect(noIat.body.errorMessage).to.match(/without an "iat" claim: name the tenant by id/);
      expect((await call("GET", "/configs", await jwks.sign({ tenant: t.id }, false))).status).to.equal(200);
    });
  });

  describe("--auth-require-tenant-claim", () => {
    let api: WebhooksUnderTest;
    before(async () => {
      api = await startWebhooks({ args: [...jwks.args, "--audit-topic", "", "--auth-require-tenant-claim"] });
    });
    after(() => api?.stop());

    it("refuses deployment-wide tokens without the admin scope; tenant tokens work as before", async () => {
      const call = async (p: string, claims: Record<string, unknown>, method = "GET", body?: unknown) =>
        api.call(method, p, body, { authorization: `Bearer ${await jwks.sign(claims)}` });
      const plain = await call("/configs", { scope: "webhooks:write" });
      expect(plain.status, plain.text).to.equal(403);
      expect(plain.body.errorMessage).to.match(/no "tenant" claim and lacks the scope webhooks:admin/);
      const admin = { scope: "webhooks:write webhooks:admin" };
      const made = await call("/tenants", admin, "POST", { uid: "initech" });
      expect(made.status, made.text).to.equal(200);
      expect((await call("/configs", { tenant: made.body.data.id })).status).to.equal(200);
      // The admin scope grants no write by itself: the scopes still decide reads and writes.
      expect((await call("/tenants", { scope: "webhooks:admin" }, "POST", { uid: "x1" })).status).to.equal(
        403,
      );
    });
  });
});
