import { randomBytes, randomUUID } from "node:crypto";
import { expect } from "chai";
import { PORTAL_FEATURES, type PortalFeature } from "../../api/portal-features.js";
import { TestJwks } from "../support/jwks.js";
import { sql } from "../support/poison.js";
import { Receiver } from "../support/receiver.js";
import { type ApiAnswer, startWebhooks, type WebhooksUnderTest } from "../support/webhooks-server.js";

/**
 * Every route of the OpenAPI document × every kind of caller × odd spellings of its path,
 * against the real API with JWT auth on (a real JWKS), PostgreSQL and Temporal. The
 * expected answer of each cell comes from RULES below, written independently of the
 * product's own table (api/route-access.ts): a route the document gains fails this test
 * until it is classified here.
 */

/**
 * How a route may be called: the token scope it needs ("public": no token at all), whose
 * resource its path names, and the portal feature that grants it ("-": none, "session":
 * every portal session).
 * - A: a resource of tenant A; a tenant-B caller gets 404, as for an unknown id.
 * - A-ro: tenant A itself, which a tenant-scoped caller may read but not change (403).
 * - self: the answer is narrowed to the caller's tenant by the route itself.
 * - ops: deployment-wide; any tenant-scoped caller gets 403.
 */
type Rule = `${"r" | "w" | "public"} ${"A" | "A-ro" | "self" | "ops"} ${PortalFeature | "session" | "-"}`;

interface Row {
  rule: Rule;
  /** The body of the call, made anew for every call. */
  body?: () => unknown;
  /** A destructive route: each call that is let through acts on a fresh resource of tenant A. */
  fresh?: "config" | "tenant" | "session" | "dead-letter" | "event-type";
  /** Statuses past the access check that still mean "let through" (the route's own refusals). */
  alsoOk?: number[];
}

const eventMessage = () => ({
  idempotency_key: `ik-${randomBytes(6).toString("hex")}`,
  date: new Date().toISOString(),
  app: "shop",
  version: "v1",
  type: "ORDER",
  payload: { id: 1 },
});

/** The receiver of tenant A's configs (set once it started). */
let receiverUrl = "";

const RULES: Record<string, Row> = {
  "GET /configs": { rule: "r self endpoints" },
  "POST /configs": {
    rule: "w self endpoints",
    body: () => ({ endpoint: "https://hooks.example.com/new", eventTypes: ["shop.*"] }),
  },
  "GET /configs/{id}": { rule: "r A endpoints" },
  "PUT /configs/{id}": {
    rule: "w A endpoints",
    body: () => ({ endpoint: receiverUrl, eventTypes: ["shop.*", "more.*"] }),
  },
  "DELETE /configs/{id}": { rule: "w A endpoints", fresh: "config" },
  "PUT /configs/{id}/activate": { rule: "w A endpoints" },
  "PUT /configs/{id}/deactivate": { rule: "w A endpoints", fresh: "config" },
  "GET /configs/{id}/stats": { rule: "r A endpoints" },
  "GET /configs/{id}/ordering-keys": { rule: "r A -", alsoOk: [409] },
  "POST /configs/{id}/ordering-keys/{key}/skip": { rule: "w A -", alsoOk: [404, 409] },
  "POST /configs/{id}/recover": { rule: "w A recovery", body: () => ({ since: "2020-01-01T00:00:00Z" }) },
  "GET /configs/{id}/recoveries": { rule: "r A recovery" },
  "GET /configs/{id}/recoveries/{recoveryId}": { rule: "r A recovery" },
  "GET /configs/{id}/secret": { rule: "w A secrets" },
  "PUT /configs/{id}/secret/change": { rule: "w A secrets", body: () => ({}) },
  "GET /configs/{id}/auth": { rule: "r A endpoints" },
  "PATCH /configs/{id}/auth": {
    rule: "w A endpoints",
    body: () => ({ headers: [{ name: "X-Team", value: "blue" }] }),
  },
  "DELETE /configs/{id}/auth": { rule: "w A endpoints" },
  "POST /configs/{id}/test": { rule: "w A test-events" },
  "GET /configs/{id}/test": { rule: "w A test-events" },
  "GET /configs/{id}/attempts": { rule: "r A deliveries" },
  "GET /configs/{id}/deliveries": { rule: "r A deliveries" },
  "GET /webhooks/{webhookId}": { rule: "r A deliveries" },
  "GET /webhooks/{webhookId}/attempts": { rule: "r A deliveries" },
  "POST /webhooks/{webhookId}/replay": { rule: "w A replay", alsoOk: [409] },
  "POST /webhooks/{webhookId}/cancel": { rule: "w A replay", alsoOk: [409] },
  "GET /tenants": { rule: "r ops -" },
  "POST /tenants": { rule: "w ops -", body: () => ({ uid: `t-${randomBytes(4).toString("hex")}` }) },
  "GET /tenants/{tenant}": { rule: "r A endpoints" },
  "PATCH /tenants/{tenant}": { rule: "w A-ro -", body: () => ({ name: "Acme" }) },
  "DELETE /tenants/{tenant}": { rule: "w A-ro -", fresh: "tenant" },
  "GET /tenants/{tenant}/configs": { rule: "r A endpoints" },
  "POST /tenants/{tenant}/portal-sessions": { rule: "w A -", body: () => ({}) },
  "GET /tenants/{tenant}/portal-sessions": { rule: "r A -" },
  "DELETE /tenants/{tenant}/portal-sessions/{id}": { rule: "w A -", fresh: "session" },
  // The route itself answers 401 to anything but a portal session.
  "GET /portal-sessions/current": { rule: "r self session", alsoOk: [401] },
  "POST /events": { rule: "w self -", body: eventMessage },
  "GET /dead-letters": { rule: "r self -" },
  "GET /dead-letters/{id}": { rule: "r A -" },
  "DELETE /dead-letters/{id}": { rule: "w A -", fresh: "dead-letter" },
  "POST /dead-letters/{id}/replay": { rule: "w A -", alsoOk: [409] },
  "GET /event-types": { rule: "r self endpoints" },
  "GET /event-types/{name}": { rule: "r self endpoints" },
  "PUT /event-types/{name}": { rule: "w ops -", body: () => ({ description: "an order" }) },
  "DELETE /event-types/{name}": { rule: "w ops -", fresh: "event-type" },
  "GET /metrics": { rule: "public self -" },
  "GET /_healthcheck": { rule: "public self -" },
  "GET /_info": { rule: "public self -" },
};

type Caller = "none" | "read" | "write" | "tenant-A" | "tenant-B" | `portal:${PortalFeature}`;
const CALLERS: Caller[] = [
  "none",
  "read",
  "write",
  "tenant-A",
  "tenant-B",
  ...PORTAL_FEATURES.map((f) => `portal:${f}` as const),
];

/** What a caller gets on a route's own spelling: a status, or "through" (past the access checks). */
function expected(row: Row, caller: Caller): number | "through" {
  const [scope, owner, feature] = row.rule.split(" ") as [string, string, string];
  if (scope === "public") return "through";
  if (caller === "none") return 401;
  if (caller.startsWith("portal:")) {
    if (owner === "ops" || owner === "A-ro") return 403;
    if (feature === "session" || feature === caller.slice("portal:".length)) return "through";
    return 403;
  }
  if (caller === "read" && scope === "w") return 403;
  if (caller === "tenant-B" && (owner === "A" || owner === "A-ro")) return 404;
  if (caller.startsWith("tenant-") && (owner === "ops" || owner === "A-ro")) return 403;
  return "through";
}

/** Other spellings of a concrete path: none of them names a route. */
function misspellings(p: string): Record<string, string> {
  const [, first = ""] = p.split("/");
  const rest = p.slice(first.length + 1);
  return {
    "upper case": p.toUpperCase(),
    "mixed case": `/${first.charAt(0).toUpperCase()}${first.slice(1)}${rest}`,
    "trailing slash": `${p}/`,
    "doubled slash": rest ? `/${first}/${rest}` : `//${first}`,
    "percent-encoded literal": `/%${first.charCodeAt(0).toString(16)}${first.slice(1)}${rest}`,
  };
}

describe("route matrix: every OpenAPI route × caller × spelling (JWT auth, tenants, portal sessions)", function () {
  this.timeout(600_000);
  let api: WebhooksUnderTest;
  let jwks: TestJwks;
  let receiver: Receiver;
  const bearer: Partial<Record<Caller, string>> = {};
  const a = { tenant: "", config: "", webhook: "", recovery: "", deadLetter: "" };
  let tenantB = "";

  const call = (method: string, p: string, caller: Caller, body?: unknown): Promise<ApiAnswer> =>
    api.call(method, p, body, {
      // Recoveries need one; every other route ignores it.
      "idempotency-key": randomUUID(),
      ...(caller === "none" ? {} : { authorization: `Bearer ${bearer[caller]}` }),
    });
  const made = async (method: string, p: string, body?: unknown) => {
    const r = await call(method, p, "write", body);
    expect(r.status, `${method} ${p}: ${r.text}`).to.be.oneOf([200, 201, 202]);
    return r.body.data ?? r.body;
  };
  const newConfig = async () =>
    (await made("POST", "/configs", { endpoint: receiver.url, eventTypes: ["shop.*"], tenantId: a.tenant }))
      .id;
  const newDeadLetter = async () => {
    const id = randomUUID();
    await sql(
      api,
      `INSERT INTO dead_letters (id, dedup_key, topic, position, message, config_id, tenant_id, kind, reason, delivery_count)
       VALUES ($1::uuid, $1::text, 'events', 'nats:TEST:1', '\\x7b7d', $2, $3, 'permanent', 'test', 1)`,
      [id, a.config, a.tenant],
    );
    return id;
  };

  /** The path parameters of one call: tenant A's shared resources, or fresh ones for a destructive call. */
  async function params(template: string, row: Row, through: boolean): Promise<Record<string, string>> {
    const shared = {
      id: template.startsWith("/dead-letters/")
        ? a.deadLetter
        : template.startsWith("/tenants/")
          ? randomUUID()
          : a.config,
      recoveryId: a.recovery,
      key: "any-key",
      webhookId: a.webhook,
      tenant: a.tenant,
      name: "shop.order",
    };
    if (!row.fresh || !through) return shared;
    switch (row.fresh) {
      case "config":
        return { ...shared, id: await newConfig() };
      case "tenant":
        return {
          ...shared,
          tenant: (await made("POST", "/tenants", { uid: `t-${randomBytes(4).toString("hex")}` })).id,
        };
      case "session":
        return { ...shared, id: (await made("POST", `/tenants/${a.tenant}/portal-sessions`, {})).id };
      case "dead-letter":
        return { ...shared, id: await newDeadLetter() };
      case "event-type": {
        const name = `gone.t${randomBytes(3).toString("hex")}`;
        await made("PUT", `/event-types/${name}`, { description: "to delete" });
        return { ...shared, name };
      }
    }
  }

  before(async () => {
    jwks = await TestJwks.start();
    receiver = await new Receiver().start();
    receiverUrl = receiver.url;
    // Every caller the table lets through sends a test delivery and starts a recovery (which
    // stays running without a worker): past the quotas of both, which tenant-quotas.test.ts tests.
    api = await startWebhooks({
      args: [
        ...jwks.args,
        "--audit-topic",
        "",
        "--config-max-test-sends",
        "0",
        "--tenant-max-recoveries",
        "0",
      ],
    });
    bearer.write = await jwks.sign({ sub: "admin" });
    bearer.read = await jwks.sign({ sub: "dashboard", scope: "webhooks:read" });
    a.tenant = (await made("POST", "/tenants", { uid: "acme" })).id;
    tenantB = (await made("POST", "/tenants", { uid: "globex" })).id;
    bearer["tenant-A"] = await jwks.sign({ sub: "acme-backend", tenant: a.tenant });
    bearer["tenant-B"] = await jwks.sign({ sub: "globex-backend", tenant: tenantB });
    for (const feature of PORTAL_FEATURES) {
      const s = await made("POST", `/tenants/${a.tenant}/portal-sessions`, { features: [feature] });
      bearer[`portal:${feature}`] = s.token;
    }
    a.config = await newConfig();
    a.webhook = (await made("POST", `/configs/${a.config}/test`)).webhookID;
    a.recovery = (await made("POST", `/configs/${a.config}/recover`, { since: "2020-01-01T00:00:00Z" })).id;
    a.deadLetter = await newDeadLetter();
    await made("PUT", "/event-types/shop.order", { description: "an order" });
  });

  after(async () => {
    await api?.stop();
    await receiver?.stop();
    jwks?.close();
  });

  it("classifies exactly the routes of the OpenAPI document", async () => {
    const doc = (await call("GET", "/openapi.json", "none")).body;
    const documented = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(
      ([p, item]) =>
        ["get", "post", "put", "patch", "delete"]
          .filter((m) => m in item)
          .map((m) => `${m.toUpperCase()} ${p}`),
    );
    expect(Object.keys(RULES).sort()).to.deep.equal(documented.sort());
  });

  it("answers each cell as the table says: the route's own spelling, HEAD for GET, and five misspellings", async () => {
    const wrong: string[] = [];
    let cells = 0;
    const see = (what: string, got: ApiAnswer, want: number | "through", row: Row) => {
      cells++;
      const ok =
        want === "through"
          ? got.status < 400 || (row.alsoOk ?? []).includes(got.status)
          : got.status === want;
      if (!ok) wrong.push(`${what}: want ${want}, got ${got.status} ${got.text.slice(0, 160)}`);
    };
    for (const [key, row] of Object.entries(RULES)) {
      const [method, template] = key.split(" ") as [string, string];
      for (const caller of CALLERS) {
        const want = expected(row, caller);
        const values = await params(template, row, want === "through");
        const p = template.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(values[name]!));
        see(`${caller} ${method} ${p}`, await call(method, p, caller, row.body?.()), want, row);
        if (method === "GET") see(`${caller} HEAD ${p}`, await call("HEAD", p, caller), want, row);
        // No misspelling reaches a route: 404, or 401 first for a caller without a token.
        const missing = caller === "none" ? 401 : 404;
        const misspelt = Object.entries(misspellings(p)).filter(([, q]) => q !== p);
        const answers = await Promise.all(misspelt.map(([, q]) => call(method, q, caller, row.body?.())));
        misspelt.forEach(([how, q], i) => {
          see(`${caller} ${method} ${q} (${how})`, answers[i]!, missing, { rule: row.rule });
        });
      }
    }
    expect(
      wrong,
      `${wrong.length} of ${cells} cells differ:\n${wrong.slice(0, 60).join("\n")}`,
    ).to.deep.equal([]);
    expect(cells).to.be.greaterThan(3000);
  });

  it("never hands the signing secret to a read token, however the path is spelled", async () => {
    const secret = (await call("GET", `/configs/${a.config}/secret`, "write")).body.data.secret as string;
    for (const p of [
      `/CONFIGS/${a.config}/SECRET`,
      `/Configs/${a.config}/Secret`,
      `/configs/${a.config}/secret/`,
      `//configs/${a.config}/secret`,
      `/configs//${a.config}/secret`,
      `/configs/${a.config}/%73ecret`,
      `/configs/${a.config.toUpperCase()}/secret`,
    ]) {
      const r = await call("GET", p, "read");
      expect(r.status, `${p}: ${r.text}`).to.be.oneOf([403, 404]);
      expect(r.text).to.not.contain(secret);
    }
  });
});
