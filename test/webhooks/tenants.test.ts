import { randomBytes } from "node:crypto";
import { cp, mkdtemp, readdir, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import pg from "pg";
import { migrate } from "../../common/db/database.js";
import { applyMigrations, MIGRATIONS_DIR } from "../../common/db/migrate.js";
import { DeliveryEnv } from "../support/delivery-env.js";
import { eventually, sql } from "../support/poison.js";
import { createTestDatabase } from "../support/postgres.js";
import { Receiver } from "../support/receiver.js";

const ISSUER = "https://issuer.test/";
const AUDIENCE = "webhooks-api";
/** The claim is configurable (--auth-tenant-claim): the test uses a name other than the default. */
const CLAIM = "org";
const DEFAULT_TENANT = "00000000-0000-0000-0000-000000000000";

type KeyLike = Awaited<ReturnType<typeof generateKeyPair>>["privateKey"];

/**
 * Tenants on the real stack (PostgreSQL, NATS JetStream, the Temporal dev server, a real
 * JWKS): isolation of events between tenants on both paths, tenant-scoped tokens, deletion.
 */
describe("tenants (API, matching on NATS and POST /events, tenant-scoped tokens)", function () {
  this.timeout(240_000);
  const env = new DeliveryEnv();
  const receivers: Record<"a" | "b" | "d", Receiver> = {} as never;
  let jwks: Server;
  let key: KeyLike;
  let admin: string;
  let tokenA: string;
  let tenantA: { id: string; uid: string };
  let tenantB: { id: string; uid: string };

  const token = (claims: Record<string, unknown>) =>
    new SignJWT({ scope: "webhooks:write", ...claims })
      .setProtectedHeader({ alg: "RS256", kid: "k1" })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setSubject("tester")
      .setIssuedAt()
      .setExpirationTime("10m")
      .sign(key);
  const call = (method: string, p: string, body?: unknown, bearer = admin) =>
    env.api.call(method, p, body, { authorization: `Bearer ${bearer}` });
  const created = async (p: string, body: unknown) => {
    const r = await call("POST", p, body);
    expect(r.status, `${p}: ${r.text}`).to.equal(200);
    return r.body.data;
  };
  const keysOf = (r: Receiver) => r.requests.map((q) => JSON.parse(q.body).idempotency_key as string).sort();

  before(async () => {
    const pair = await generateKeyPair("RS256");
    key = pair.privateKey;
    const jwk = { ...(await exportJWK(pair.publicKey)), kid: "k1", alg: "RS256", use: "sig" };
    jwks = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ keys: [jwk] }));
    });
    await new Promise<void>((resolve) => jwks.listen(0, "127.0.0.1", resolve));
    const jwksUrl = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks.json`;
    await env.start([
      "--auth-jwks-url",
      jwksUrl,
      "--auth-issuer",
      ISSUER,
      "--auth-audience",
      AUDIENCE,
      "--auth-tenant-claim",
      CLAIM,
    ]);
    for (const name of ["a", "b", "d"] as const) receivers[name] = await new Receiver().start();
    admin = await token({});
    tenantA = await created("/tenants", { uid: "acme", name: "Acme", metadata: { plan: "pro" } });
    tenantB = await created("/tenants", { uid: "globex", name: "Globex" });
    tokenA = await token({ [CLAIM]: "acme" });
  });

  after(async () => {
    for (const r of Object.values(receivers)) await r?.stop();
    await env.stop();
    jwks?.close();
  });

  it("has the built-in default tenant, which owns configs created without a tenant and cannot be deleted", async () => {
    const byId = await call("GET", `/tenants/${DEFAULT_TENANT}`);
    expect(byId.status, byId.text).to.equal(200);
    expect(byId.body.data).to.include({ id: DEFAULT_TENANT, uid: "default" });
    expect((await call("GET", "/tenants/uid:default")).body.data.id).to.equal(DEFAULT_TENANT);
    const del = await call("DELETE", `/tenants/${DEFAULT_TENANT}`);
    expect(del.status, del.text).to.equal(409);
    expect(del.body.errorMessage).to.equal("the default tenant cannot be deleted");
    const renamed = await call("PATCH", "/tenants/uid:default", { uid: "other" });
    expect(renamed.status).to.equal(400);
    expect(renamed.body.errorMessage).to.contain("uid of the default tenant cannot change");
    const config = await created("/configs", { endpoint: receivers.d.url, eventTypes: ["shop.*"] });
    expect(config.tenantId).to.equal(DEFAULT_TENANT);
  });

  it("creates, reads, pages, changes and validates tenants (400 naming the field, nothing stored)", async () => {
    expect(tenantA).to.deep.include({ uid: "acme", name: "Acme", metadata: { plan: "pro" } });
    const dup = await call("POST", "/tenants", { uid: "acme" });
    expect(dup.status).to.equal(409);
    expect(dup.body.errorMessage).to.equal('a tenant with uid "acme" exists');
    const bad: [unknown, string][] = [
      [{ name: "no uid" }, "uid is required"],
      [{ uid: "" }, "uid"],
      [{ uid: "a/b" }, "uid"],
      [{ uid: "8d3c1a52-1b1e-4c1f-9c57-0c8f3b8a1e11" }, "uid"],
      [{ uid: "x".repeat(129) }, "uid"],
      [{ uid: "ok-1", metadata: [1] }, "metadata"],
      [{ uid: "ok-1", metadata: { blob: "x".repeat(5000) } }, "metadata must be at most 4096 bytes"],
      [{ uid: "ok-1", extra: 1 }, "extra"],
      ["[", "JSON"],
    ];
    for (const [body, words] of bad) {
      const r = await call("POST", "/tenants", body);
      expect(r.status, `${JSON.stringify(body)}: ${r.text}`).to.equal(400);
      expect(r.body.errorCode).to.equal("VALIDATION");
      expect(r.body.errorMessage).to.contain(words);
    }
    const counted = await sql<{ n: number }>(env.api, "SELECT count(*)::int AS n FROM tenants");
    expect(counted[0]!.n).to.equal(3);

    const patched = await call("PATCH", `/tenants/${tenantB.id}`, {
      name: "Globex Corp",
      metadata: { tier: 2 },
    });
    expect(patched.status, patched.text).to.equal(200);
    expect(patched.body.data).to.deep.include({ uid: "globex", name: "Globex Corp", metadata: { tier: 2 } });
    const taken = await call("PATCH", `/tenants/${tenantB.id}`, { uid: "acme" });
    expect(taken.status).to.equal(409);
    expect((await call("GET", "/tenants/uid:globex")).body.data.name).to.equal("Globex Corp");
    expect((await call("GET", "/tenants/uid:nobody")).status).to.equal(404);
    expect((await call("GET", "/tenants/not-an-id")).status).to.equal(404);

    const first = await call("GET", "/tenants?pageSize=2");
    expect(first.body.cursor.hasMore).to.equal(true);
    const second = await call("GET", `/tenants?pageSize=2&cursor=${first.body.cursor.next}`);
    const uids = [...first.body.cursor.data, ...second.body.cursor.data].map((t: { uid: string }) => t.uid);
    expect(uids.sort()).to.deep.equal(["acme", "default", "globex"]);
    expect(
      (await call("GET", "/tenants?uid=acme")).body.cursor.data.map((t: { id: string }) => t.id),
    ).to.deep.equal([tenantA.id]);
  });

  it("delivers 200 events split between two tenants (NATS and POST /events) only to their own tenant's configs", async () => {
    // Identical event types and endpoints' shapes in both tenants (and in the default tenant).
    const configA = await created("/configs", {
      endpoint: receivers.a.url,
      eventTypes: ["shop.*"],
      tenantId: tenantA.id,
    });
    const configB = await created("/configs", {
      endpoint: receivers.b.url,
      eventTypes: ["shop.*"],
      tenantId: tenantB.id,
    });
    expect([configA.tenantId, configB.tenantId]).to.deep.equal([tenantA.id, tenantB.id]);
    const configD = (await call("GET", "/configs")).body.cursor.data.find(
      (c: { endpoint: string }) => c.endpoint === receivers.d.url,
    );
    const tenants = await call("GET", `/tenants/${tenantB.id}/configs`);
    expect(tenants.body.cursor.data.map((c: { id: string }) => c.id)).to.deep.equal([configB.id]);

    const expected: Record<"a" | "b" | "d", string[]> = { a: [], b: [], d: [] };
    const starts: [string, string][] = [];
    for (let i = 0; i < 200; i++) {
      const toA = i % 2 === 0;
      const overNats = i % 4 < 2;
      // A by uid, B by id: an event names its tenant either way.
      const tenant = toA ? "acme" : tenantB.id;
      const ik = `t-${i}`;
      const event = env.event({
        app: "shop",
        type: "ORDER_PAID",
        idempotency_key: ik,
        tenant,
        payload: { i },
      });
      if (overNats) await env.publish(event);
      else {
        const r = await call("POST", "/events", event);
        expect(r.status, r.text).to.equal(202);
        expect(r.body.data.deliveries.map((d: { configID: string }) => d.configID)).to.deep.equal([
          toA ? configA.id : configB.id,
        ]);
      }
      expected[toA ? "a" : "b"].push(ik);
      starts.push([toA ? configA.id : configB.id, ik]);
    }
    // And events without a tenant: the default tenant's configs only.
    for (let i = 0; i < 10; i++) {
      const event = env.event({ app: "shop", type: "ORDER_PAID", idempotency_key: `d-${i}` });
      if (i % 2 === 0) await env.publish(event);
      else expect((await call("POST", "/events", event)).status).to.equal(202);
      expected.d.push(`d-${i}`);
      starts.push([configD.id, `d-${i}`]);
    }
    for (const [configId, ik] of starts) {
      expect((await env.result(configId, ik, 60_000)).status, `${configId} ${ik}`).to.equal("success");
    }
    for (const name of ["a", "b", "d"] as const)
      expect(keysOf(receivers[name])).to.deep.equal(expected[name].sort());
    // The body sent is the event without the tenant it named.
    expect(JSON.parse(receivers.a.requests[0]!.body)).not.to.have.property("tenant");

    // The tenant is a search attribute of every delivery.
    const described = await env.temporal.workflow.getHandle(env.workflowId(configB.id, "t-1")).describe();
    expect(described.searchAttributes.WebhookTenantId).to.deep.equal([tenantB.id]);
    await eventually(
      "deliveries of tenant A listed by WebhookTenantId",
      async () => {
        let n = 0;
        for await (const _ of env.temporal.workflow.list({ query: `WebhookTenantId = "${tenantA.id}"` })) n++;
        return n === 100;
      },
      30_000,
      500,
    );
  });

  it("refuses an event naming a tenant that does not exist: 400 over HTTP, a permanent dead letter from NATS, delivered nowhere", async () => {
    const before = Object.values(receivers).reduce((n, r) => n + r.requests.length, 0);
    const event = env.event({
      app: "shop",
      type: "ORDER_PAID",
      idempotency_key: "ghost-1",
      tenant: "initech",
    });
    const r = await call("POST", "/events", event);
    expect(r.status, r.text).to.equal(400);
    expect(r.body.errorMessage).to.equal(
      'tenant "initech" does not exist: the event names no tenant\'s id or uid',
    );
    const bad = await call("POST", "/events", { ...event, tenant: 42 });
    expect(bad.status).to.equal(400);
    expect(bad.body.errorMessage).to.contain('field "tenant" must be a non-empty string');

    await env.publish({ ...event, idempotency_key: "ghost-2" });
    let rows: { kind: string; reason: string; tenant_id: string | null; config_id: string | null }[] = [];
    await eventually(
      "the ghost tenant's event dead-lettered",
      async () => {
        rows = await sql(
          env.api,
          `SELECT kind::text AS kind, reason, tenant_id, config_id FROM dead_letters WHERE event_type = 'shop.order_paid'`,
        );
        return rows.length > 0;
      },
      30_000,
    );
    expect(rows).to.deep.equal([
      {
        kind: "permanent",
        reason: 'tenant "initech" does not exist: the event names no tenant\'s id or uid',
        tenant_id: null,
        config_id: null,
      },
    ]);
    expect(Object.values(receivers).reduce((n, r) => n + r.requests.length, 0)).to.equal(before);
  });

  it("gives a tenant-A token 404 on every route of a B resource in the OpenAPI document, 403 on deployment-wide routes", async () => {
    // B's resources: a config, a delivery, a recovery, a dead letter (a config whose row cannot be used).
    const configB = (await call("GET", `/tenants/${tenantB.id}/configs`)).body.cursor.data[0];
    const webhookB = (await call("GET", `/configs/${configB.id}/attempts?pageSize=1`)).body.cursor.data[0]
      .webhookID;
    const broken = await created("/configs", {
      endpoint: receivers.b.url,
      eventTypes: ["broken.*"],
      tenantId: tenantB.id,
    });
    await sql(env.api, `UPDATE configs SET endpoint = 'http://[not a host' WHERE id = $1`, [broken.id]);
    await env.publish(env.event({ app: "broken", type: "x", tenant: "globex" }));
    let deadLetterB = "";
    await eventually(
      "B's dead letter",
      async () => {
        const rows = await sql<{ id: string; tenant_id: string }>(
          env.api,
          "SELECT id, tenant_id FROM dead_letters WHERE config_id = $1",
          [broken.id],
        );
        deadLetterB = rows[0]?.id ?? "";
        return rows.length > 0;
      },
      30_000,
    );
    expect((await call("GET", `/dead-letters/${deadLetterB}`)).body.data.tenantID).to.equal(tenantB.id);
    const recovery = await env.api.call(
      "POST",
      `/configs/${configB.id}/recover`,
      { since: "2020-01-01T00:00:00Z" },
      { authorization: `Bearer ${admin}`, "idempotency-key": "r-1" },
    );
    expect(recovery.status, recovery.text).to.be.oneOf([200, 202]);

    const sessionB = await call("POST", `/tenants/${tenantB.id}/portal-sessions`, {});
    expect(sessionB.status, sessionB.text).to.equal(201);

    const values: Record<string, Record<string, string>> = {
      "/configs/": { id: configB.id, recoveryId: recovery.body.data.id, key: "any-key" },
      "/webhooks/": { webhookId: webhookB },
      "/dead-letters/": { id: deadLetterB },
      "/tenants/": { tenant: tenantB.id, id: sessionB.body.id },
    };
    const doc = (await call("GET", "/openapi.json")).body;
    const checked: string[] = [];
    for (const [template, item] of Object.entries(doc.paths as Record<string, Record<string, unknown>>)) {
      if (!template.includes("{")) continue;
      // The event catalog is deployment-wide: no tenant owns a type (its writes are 403 below).
      if (template.startsWith("/event-types/")) continue;
      const params = values[Object.keys(values).find((prefix) => template.startsWith(prefix)) ?? ""];
      expect(params, `a B resource for ${template}: add it to this test`).to.not.equal(undefined);
      const concrete = template.replace(/\{(\w+)\}/g, (_, name: string) => {
        expect(params![name], `${template}: {${name}}`).to.be.a("string");
        return params![name]!;
      });
      for (const method of ["get", "post", "put", "patch", "delete"].filter((m) => m in item)) {
        for (const p of [concrete, concrete.replace(tenantB.id, "uid:globex")]) {
          const r = await call(method.toUpperCase(), p, undefined, tokenA);
          expect(r.status, `${method} ${p}: ${r.text}`).to.equal(404);
          expect(r.body.errorCode).to.equal("NOT_FOUND");
        }
        checked.push(`${method} ${template}`);
      }
    }
    expect(checked.length).to.be.greaterThan(20);
    // The same routes answer B's own token.
    const tokenB = await token({ [CLAIM]: tenantB.id });
    expect((await call("GET", `/configs/${configB.id}`, undefined, tokenB)).status).to.equal(200);
    expect((await call("GET", `/webhooks/${webhookB}`, undefined, tokenB)).status).to.equal(200);
    expect((await call("GET", `/dead-letters/${deadLetterB}`, undefined, tokenB)).status).to.equal(200);

    // Routes without an id: 403 where they span tenants, the token's tenant's results elsewhere.
    for (const [method, p, body] of [
      ["GET", "/tenants"],
      ["POST", "/tenants", { uid: "sneaky" }],
      ["PATCH", `/tenants/${tenantA.id}`, { name: "mine" }],
      ["DELETE", `/tenants/${tenantA.id}`],
      ["PUT", "/event-types/shop.order_paid", { description: "x" }],
      ["DELETE", "/event-types/shop.order_paid"],
    ] as const) {
      const r = await call(method, p, body, tokenA);
      expect(r.status, `${method} ${p}: ${r.text}`).to.equal(403);
      expect(r.body.errorCode).to.equal("FORBIDDEN");
    }
    expect((await call("GET", `/tenants/${tenantA.id}`, undefined, tokenA)).body.data.uid).to.equal("acme");
    expect((await call("GET", "/event-types", undefined, tokenA)).status).to.equal(200);
    const listed = (await call("GET", "/configs", undefined, tokenA)).body.cursor.data;
    expect(listed.map((c: { tenantId: string }) => c.tenantId)).to.deep.equal([tenantA.id]);
    const paged = (await call("GET", "/configs?pageSize=10", undefined, tokenA)).body.cursor.data;
    expect(paged.map((c: { id: string }) => c.id)).to.deep.equal(listed.map((c: { id: string }) => c.id));
    expect((await call("GET", "/dead-letters", undefined, tokenA)).body.cursor.data).to.deep.equal([]);
    expect((await call("GET", "/dead-letters", undefined, tokenB)).body.cursor.data.length).to.equal(1);

    const own = await call("POST", "/configs", { endpoint: receivers.a.url, eventTypes: ["own.*"] }, tokenA);
    expect(own.body.data.tenantId).to.equal(tenantA.id);
    const foreign = await call(
      "POST",
      "/configs",
      { endpoint: receivers.a.url, eventTypes: ["own.*"], tenantId: tenantB.id },
      tokenA,
    );
    expect(foreign.status).to.equal(400);
    expect(foreign.body.errorMessage).to.equal(`tenantId ${tenantB.id} does not name a tenant`);
    const moved = await call("PUT", `/configs/${own.body.data.id}`, {
      endpoint: receivers.a.url,
      eventTypes: ["own.*"],
      tenantId: tenantB.id,
    });
    expect(moved.status).to.equal(400);
    expect(moved.body.errorMessage).to.contain("tenantId cannot change");

    // Events from A's token: its tenant by default, never another's.
    const ev = env.event({ app: "own", type: "thing" });
    const mine = await call("POST", "/events", ev, tokenA);
    expect(mine.status, mine.text).to.equal(202);
    expect(mine.body.data.deliveries.map((d: { configID: string }) => d.configID)).to.deep.equal([
      own.body.data.id,
    ]);
    const theirs = await call("POST", "/events", { ...ev, tenant: "globex" }, tokenA);
    expect(theirs.status).to.equal(400);
    expect(theirs.body.errorMessage).to.equal(
      'tenant "globex" does not exist: the event names no tenant\'s id or uid',
    );

    const ghost = await call("GET", "/configs", undefined, await token({ [CLAIM]: "initech" }));
    expect(ghost.status).to.equal(403);
    expect(ghost.body.errorMessage).to.contain('its tenant "initech" does not exist');
  });

  it("deletes a tenant with its configs, closing their queued deliveries and keeping the attempt rows", async () => {
    const failing = await new Receiver().start();
    // Retry-After keeps each delivery queued (one `to retry` row) until it is closed.
    failing.respond = (_req, res) => res.writeHead(503, { "retry-after": "60" }).end("down");
    try {
      const tenant = await created("/tenants", { uid: "hooli" });
      const config = await created("/configs", {
        endpoint: failing.url,
        eventTypes: ["shop.*"],
        tenantId: tenant.id,
      });
      for (let i = 0; i < 3; i++) {
        await env.publish(
          env.event({ app: "shop", type: "ORDER_PAID", idempotency_key: `h-${i}`, tenant: "hooli" }),
        );
      }
      await eventually(
        "three deliveries queued for a retry",
        async () => {
          const rows = await sql(
            env.api,
            `SELECT DISTINCT webhook_id FROM attempts WHERE config_id = $1 AND status IN ('to retry', 'retrying')`,
            [config.id],
          );
          return rows.length === 3;
        },
        30_000,
      );
      const del = await call("DELETE", "/tenants/uid:hooli");
      expect(del.status, del.text).to.equal(200);
      expect(del.body.data).to.deep.include({ id: tenant.id, deleted: true, configsDeleted: 1 });
      for (let i = 0; i < 3; i++) {
        const result = await env.result(config.id, `h-${i}`);
        expect(result.status, JSON.stringify(result)).to.equal("failed");
      }
      const rows = await sql<{ status: string; error: string | null }>(
        env.api,
        "SELECT status::text AS status, error FROM attempts WHERE config_id = $1",
        [config.id],
      );
      expect(rows).to.deep.equal([1, 2, 3].map(() => ({ status: "failed", error: "tenant deleted" })));
      expect((await call("GET", `/configs/${config.id}`)).status).to.equal(404);
      expect((await call("GET", `/tenants/${tenant.id}`)).status).to.equal(404);
      // Its attempts stay listable (deployment-wide) until retention.
      expect((await call("GET", `/configs/${config.id}/attempts`)).body.cursor.data.length).to.equal(
        rows.length,
      );
      const again = env.event({ app: "shop", type: "ORDER_PAID", tenant: "hooli" });
      expect((await call("POST", "/events", again)).status).to.equal(400);
    } finally {
      await failing.stop();
    }
  });
});

describe("tenants migration (configs created before it)", () => {
  it("puts every existing config in the default tenant", async () => {
    const db = await createTestDatabase({ migrated: false });
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      // The schema as it was before tenants: every migration up to the one before 20261201300000.
      const before = await mkdtemp(path.join(tmpdir(), "pre-tenants-"));
      for (const entry of await readdir(MIGRATIONS_DIR, { withFileTypes: true })) {
        if (entry.isDirectory() && entry.name < "20261201300000")
          await cp(path.join(MIGRATIONS_DIR, entry.name), path.join(before, entry.name), { recursive: true });
      }
      const runner = {
        query: async <R>(text: string, params?: unknown[]) => ({
          rows: (await client.query(text, params)).rows as R[],
        }),
        exec: (text: string) => client.query(text),
      };
      await applyMigrations(runner, undefined, before);
      await rm(before, { recursive: true });
      const ids = [randomBytes(16), randomBytes(16)].map((b) => {
        const h = b.toString("hex");
        return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20)}`;
      });
      for (const id of ids) {
        await client.query(
          `INSERT INTO configs (id, endpoint, event_types, secret) VALUES ($1, 'http://127.0.0.1:1/hook', '{ledger.*}', 'c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2Vj')`,
          [id],
        );
      }
      await migrate(db.url);
      const { rows } = await client.query("SELECT id, tenant_id FROM configs ORDER BY id");
      expect(rows).to.deep.equal(ids.sort().map((id) => ({ id, tenant_id: DEFAULT_TENANT })));
      const tenants = await client.query("SELECT id, uid FROM tenants");
      expect(tenants.rows).to.deep.equal([{ id: DEFAULT_TENANT, uid: "default" }]);
    } finally {
      await client.end();
      await db.drop();
    }
  });
});
