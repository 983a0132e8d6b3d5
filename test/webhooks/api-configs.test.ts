import { expect } from "chai";
import pg from "pg";
import { verifySignature } from "../../activities/signature.js";
import { freePort } from "../support/ports.js";
import { Receiver } from "../support/receiver.js";
import { startWebhooks, type WebhooksUnderTest } from "../support/webhooks-server.js";

const SECRET = Buffer.alloc(24, 7).toString("base64");
const UNKNOWN = "00000000-0000-4000-8000-000000000000";

describe("configs REST API (real server, PostgreSQL, Temporal)", function () {
  this.timeout(120_000);
  let api: WebhooksUnderTest;

  before(async () => {
    api = await startWebhooks();
  });
  after(async () => {
    await api?.stop();
  });

  const create = async (over: Record<string, unknown> = {}) => {
    const r = await api.call("POST", "/configs", {
      endpoint: "https://example.test/hook",
      eventTypes: ["ledger.committed_transactions"],
      ...over,
    });
    expect(r.status, r.text).to.equal(200);
    return r.body.data;
  };
  /** A config as every answer but create and rotation shows it: the secret masked. */
  const masked = (c: Record<string, unknown>) => ({ ...c, secret: "********" });

  const countConfigs = async () => {
    const client = new pg.Client({ connectionString: api.db.url });
    await client.connect();
    try {
      return Number((await client.query("SELECT count(*) FROM configs")).rows[0].count);
    } finally {
      await client.end();
    }
  };

  describe("create", () => {
    it("stores the config, generates a 24-byte secret and lower-cases event types", async () => {
      const c = await create({ eventTypes: ["Ledger.Committed_Transactions", "PAYMENTS.*"], name: "orders" });
      expect(c).to.include({ endpoint: "https://example.test/hook", name: "orders", active: true });
      expect(c.eventTypes).to.deep.equal(["ledger.committed_transactions", "payments.*"]);
      expect(Buffer.from(c.secret, "base64")).to.have.length(24);
      expect(c.id).to.match(/^[0-9a-f-]{36}$/);
      expect(Date.parse(c.createdAt)).to.be.closeTo(Date.now(), 60_000);
      expect(c.updatedAt).to.equal(c.createdAt);
    });

    it("keeps a given secret and accepts a charset in the content type", async () => {
      const r = await api.call(
        "POST",
        "/configs",
        { endpoint: "http://127.0.0.1:9/x", eventTypes: ["a.b"], secret: SECRET },
        { "content-type": "application/json; charset=utf-8" },
      );
      expect(r.status).to.equal(200);
      expect(r.body.data.secret).to.equal(SECRET);
    });

    const rejections: [string, unknown, RegExp][] = [
      [
        "an unknown field",
        { endpoint: "https://x.test", eventTypes: ["a.b"], color: "red" },
        /unknown field "color"/,
      ],
      ["a missing endpoint", { eventTypes: ["a.b"] }, /missing required field "endpoint"/],
      [
        "eventTypes of the wrong type",
        { endpoint: "https://x.test", eventTypes: "a.b" },
        /eventTypes must be of type array/,
      ],
      [
        "an entry of the wrong type",
        { endpoint: "https://x.test", eventTypes: ["a.b", 3] },
        /eventTypes\[1\] must be of type string/,
      ],
      ["empty eventTypes", { endpoint: "https://x.test", eventTypes: [] }, /eventTypes must not be empty/],
      [
        "an event type without an app",
        { endpoint: "https://x.test", eventTypes: ["committed"] },
        /eventTypes\[0\] must be an event type <app>.<type>/,
      ],
      [
        "an event type with spaces inside",
        { endpoint: "https://x.test", eventTypes: ["a. b"] },
        /eventTypes\[0\]/,
      ],
      [
        "a relative endpoint",
        { endpoint: "foo", eventTypes: ["a.b"] },
        /endpoint must be an absolute http\(s\) URL, got "foo"/,
      ],
      [
        "a non-http endpoint",
        { endpoint: "ftp://x.test/", eventTypes: ["a.b"] },
        /endpoint must use http or https, got "ftp"/,
      ],
      [
        "a secret of the wrong size",
        { endpoint: "https://x.test", eventTypes: ["a.b"], secret: "c2hvcnQ=" },
        /secret must be standard base64 of exactly 24 bytes/,
      ],
      [
        "a secret that is not base64",
        { endpoint: "https://x.test", eventTypes: ["a.b"], secret: "!".repeat(32) },
        /secret must be standard base64/,
      ],
      [
        "a name that is not a string",
        { endpoint: "https://x.test", eventTypes: ["a.b"], name: 5 },
        /name must be of type string/,
      ],
      ["a body that is not an object", ["https://x.test"], /body must be a JSON object/],
    ];
    for (const [what, body, message] of rejections) {
      it(`rejects ${what} with 400 VALIDATION naming the field, writing nothing`, async () => {
        const before = await countConfigs();
        const r = await api.call("POST", "/configs", body);
        expect(r.status).to.equal(400);
        expect(r.body.errorCode).to.equal("VALIDATION");
        expect(r.body.errorMessage).to.match(message);
        expect(await countConfigs()).to.equal(before);
      });
    }

    it("rejects malformed JSON, a wrong content type, an empty body and a huge body", async () => {
      const before = await countConfigs();
      const malformed = await api.call("POST", "/configs", '{"endpoint": "https://x.test",');
      expect(malformed.status).to.equal(400);
      expect(malformed.body.errorMessage).to.match(/^malformed JSON body/);
      const text = await api.call("POST", "/configs", '{"endpoint":"https://x.test","eventTypes":["a.b"]}', {
        "content-type": "text/plain",
      });
      expect(text.status).to.equal(400);
      expect(text.body.errorMessage).to.equal("Content-Type must be application/json, got text/plain");
      const empty = await api.call("POST", "/configs");
      expect(empty.status).to.equal(400);
      expect(empty.body.errorMessage).to.equal("request body must not be empty");
      const huge = await api.call("POST", "/configs", {
        endpoint: "https://x.test",
        eventTypes: ["a.b"],
        name: "x".repeat(100_000),
      });
      expect(huge.status).to.equal(413);
      expect(huge.body.errorMessage).to.match(/larger than the 65536 byte limit/);
      expect(await countConfigs()).to.equal(before);
    });
  });

  describe("read", () => {
    it("lists every config in the cursor wrapper, newest update first", async () => {
      const a = await create();
      const b = await create();
      const r = await api.call("GET", "/configs");
      expect(r.status).to.equal(200);
      expect(r.body.cursor.hasMore).to.equal(false);
      const ids = r.body.cursor.data.map((c: { id: string }) => c.id);
      expect(ids.indexOf(b.id)).to.be.lessThan(ids.indexOf(a.id));
      expect(ids).to.have.length(await countConfigs());
    });

    it("filters by id and by endpoint", async () => {
      const c = await create({ endpoint: "https://filter.test/only" });
      const byId = await api.call("GET", `/configs?id=${c.id}`);
      expect(byId.body.cursor.data[0]).to.deep.equal(masked(c));
      const rotated = await api.call("PUT", `/configs/${c.id}/secret/change`, { overlap: "1h" });
      expect((await api.call("GET", `/configs?id=${c.id}`)).body.cursor.data[0]).to.deep.equal(
        masked(rotated.body.data),
      );
      expect(byId.body.cursor.data.map((x: { id: string }) => x.id)).to.deep.equal([c.id]);
      const byEndpoint = await api.call(
        "GET",
        `/configs?endpoint=${encodeURIComponent("https://filter.test/only")}`,
      );
      expect(byEndpoint.body.cursor.data.map((x: { id: string }) => x.id)).to.deep.equal([c.id]);
      const none = await api.call("GET", `/configs?id=${UNKNOWN}`);
      expect(none.body).to.deep.equal({ cursor: { hasMore: false, data: [] } });
    });

    it("pages with pageSize and the returned cursor", async () => {
      const total = await countConfigs();
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const r = await api.call("GET", `/configs?pageSize=2${cursor ? `&cursor=${cursor}` : ""}`);
        expect(r.status).to.equal(200);
        expect(r.body.cursor.pageSize).to.equal(2);
        seen.push(...r.body.cursor.data.map((c: { id: string }) => c.id));
        cursor = r.body.cursor.next;
        expect(r.body.cursor.hasMore).to.equal(Boolean(cursor));
      } while (cursor);
      expect(seen).to.have.length(total);
      expect(new Set(seen).size).to.equal(total);
    });

    it("rejects unknown, repeated and malformed query parameters", async () => {
      expect((await api.call("GET", "/configs?color=red")).body.errorMessage).to.match(
        /unknown query parameter "color"/,
      );
      expect((await api.call("GET", `/configs?id=${UNKNOWN}&id=${UNKNOWN}`)).body.errorMessage).to.match(
        /given once/,
      );
      expect((await api.call("GET", "/configs?id=nope")).body.errorMessage).to.equal(
        'id must be a UUID, got "nope"',
      );
      expect((await api.call("GET", "/configs?endpoint=nope")).status).to.equal(400);
      expect((await api.call("GET", "/configs?pageSize=0")).body.errorMessage).to.match(/pageSize must be/);
      expect((await api.call("GET", "/configs?cursor=zzz")).body.errorMessage).to.match(/cursor is not/);
    });

    it("gets one config, and 404 with a JSON body for an unknown or malformed id", async () => {
      const c = await create();
      const r = await api.call("GET", `/configs/${c.id}`);
      expect(r.body.data).to.deep.equal(masked(c));
      for (const id of [UNKNOWN, "not-a-uuid"]) {
        const missing = await api.call("GET", `/configs/${id}`);
        expect(missing.status).to.equal(404);
        expect(missing.body).to.deep.equal({
          errorCode: "NOT_FOUND",
          errorMessage: `config ${id} not found`,
        });
      }
    });

    it("answers unknown routes with 404 in the error format", async () => {
      const r = await api.call("GET", "/nope");
      expect(r.status).to.equal(404);
      expect(r.body).to.deep.equal({ errorCode: "NOT_FOUND", errorMessage: "no route for GET /nope" });
    });
  });

  describe("update", () => {
    it("replaces the fields, refreshes updatedAt and generates a secret when absent", async () => {
      const c = await create({ secret: SECRET });
      await new Promise((r) => setTimeout(r, 20));
      const r = await api.call("PUT", `/configs/${c.id}`, {
        endpoint: "https://changed.test/x",
        eventTypes: ["Orders.Created"],
        name: "renamed",
      });
      expect(r.status).to.equal(200);
      const u = r.body.data;
      expect(u).to.include({
        id: c.id,
        endpoint: "https://changed.test/x",
        name: "renamed",
        createdAt: c.createdAt,
      });
      expect(u.eventTypes).to.deep.equal(["orders.created"]);
      expect(u.secret).to.not.equal(SECRET);
      expect(Date.parse(u.updatedAt)).to.be.greaterThan(Date.parse(c.updatedAt));
      expect((await api.call("GET", `/configs/${c.id}`)).body.data).to.deep.equal(u);
    });

    it("is 404 for an unknown id and creates nothing", async () => {
      const before = await countConfigs();
      const r = await api.call("PUT", `/configs/${UNKNOWN}`, {
        endpoint: "https://x.test",
        eventTypes: ["a.b"],
      });
      expect(r.status).to.equal(404);
      expect(r.body.errorCode).to.equal("NOT_FOUND");
      expect(await countConfigs()).to.equal(before);
    });

    it("validates like create and leaves the stored config untouched", async () => {
      const c = await create();
      const r = await api.call("PUT", `/configs/${c.id}`, { endpoint: "https://x.test", eventTypes: [] });
      expect(r.status).to.equal(400);
      expect((await api.call("GET", `/configs/${c.id}`)).body.data).to.deep.equal(masked(c));
    });
  });

  describe("activate, deactivate, delete", () => {
    it("switches the active flag, idempotently", async () => {
      const c = await create();
      const off = await api.call("PUT", `/configs/${c.id}/deactivate`);
      expect(off.body.data.active).to.equal(false);
      expect((await api.call("PUT", `/configs/${c.id}/deactivate`)).body.data.active).to.equal(false);
      const on = await api.call("PUT", `/configs/${c.id}/activate`);
      expect(on.body.data.active).to.equal(true);
      expect((await api.call("PUT", `/configs/${UNKNOWN}/activate`)).status).to.equal(404);
      expect((await api.call("PUT", `/configs/${UNKNOWN}/deactivate`)).status).to.equal(404);
    });

    it("deletes, then answers 404", async () => {
      const c = await create();
      const del = await api.call("DELETE", `/configs/${c.id}`);
      expect(del.status).to.equal(200);
      expect((await api.call("GET", `/configs/${c.id}`)).status).to.equal(404);
      expect((await api.call("DELETE", `/configs/${c.id}`)).status).to.equal(404);
    });
  });

  describe("secret change", () => {
    it("generates a new secret without a body, or takes the given one", async () => {
      const c = await create({ secret: SECRET });
      const generated = await api.call("PUT", `/configs/${c.id}/secret/change`);
      expect(generated.status).to.equal(200);
      expect(generated.body.data.secret).to.not.equal(SECRET);
      expect(generated.body.data).to.not.have.property("previousSecretExpiresAt");
      const given = await api.call("PUT", `/configs/${c.id}/secret/change`, { secret: SECRET });
      expect(given.body.data.secret).to.equal(SECRET);
    });

    it("keeps the old secret signing during a requested overlap", async () => {
      const c = await create({ secret: SECRET });
      const r = await api.call("PUT", `/configs/${c.id}/secret/change`, { overlap: "24h" });
      expect(r.status).to.equal(200);
      expect(Date.parse(r.body.data.previousSecretExpiresAt) - Date.now()).to.be.closeTo(
        24 * 3_600_000,
        60_000,
      );
    });

    it("rejects a bad secret, a bad or too long overlap and unknown fields", async () => {
      const c = await create({ secret: SECRET });
      for (const [body, message] of [
        [{ secret: "abc" }, /secret must be standard base64/],
        [{ overlap: "a day" }, /overlap must be how long/],
        [{ overlap: "721h" }, /overlap must be at most 720h/],
        [{ secret: SECRET, rotate: true }, /unknown field "rotate"/],
      ] as const) {
        const r = await api.call("PUT", `/configs/${c.id}/secret/change`, body);
        expect(r.status).to.equal(400);
        expect(r.body.errorMessage).to.match(message);
      }
      expect((await api.call("GET", `/configs/${c.id}/secret`)).body.data.secret).to.equal(SECRET);
      expect((await api.call("PUT", `/configs/${UNKNOWN}/secret/change`)).status).to.equal(404);
    });
  });

  describe("test delivery", () => {
    let receiver: Receiver;
    before(async () => {
      receiver = await new Receiver().start();
    });
    after(() => receiver.stop());

    it("POSTs a signed test event and returns the recorded attempt", async () => {
      const c = await create({ endpoint: receiver.url, secret: SECRET });
      const r = await api.call("POST", `/configs/${c.id}/test`);
      expect(r.status).to.equal(200);
      const attempt = r.body.data;
      expect(attempt).to.include({ statusCode: 200, status: "success", retryAttempt: 0 });
      expect(attempt.config).to.include({ id: c.id, endpoint: receiver.url });
      expect(attempt.config).to.not.have.property("secret");
      const req = receiver.requests.at(-1)!;
      expect(req.headers["svc-webhook-test"]).to.equal("true");
      expect(req.headers["svc-webhook-id"]).to.equal(attempt.webhookID);
      expect(req.body).to.equal(attempt.payload);
      expect(JSON.parse(req.body)).to.include({ app: "webhooks", type: "webhooks.test" });
      const header = {
        id: String(req.headers["svc-webhook-id"]),
        timestamp: String(req.headers["svc-webhook-timestamp"]),
        signature: String(req.headers["svc-webhook-signature"]),
      };
      expect(verifySignature(SECRET, header, req.body)).to.equal(true);
      const listed = await api.call("GET", `/webhooks/${attempt.webhookID}`);
      expect(listed.body.data).to.include({ status: "success", attemptCount: 1, configID: c.id });
    });

    it("records status code 0 and failed when the endpoint is unreachable", async () => {
      const c = await create({ endpoint: `http://127.0.0.1:${await freePort()}/unreachable` });
      const r = await api.call("POST", `/configs/${c.id}/test`);
      expect(r.status).to.equal(200);
      expect(r.body.data).to.include({ statusCode: 0, status: "failed" });
      expect(r.body.data.error).to.match(/ECONNREFUSED/);
    });

    it("records a failure status from the endpoint", async () => {
      receiver.respond = (_req, res) => res.writeHead(503).end("down");
      const c = await create({ endpoint: receiver.url });
      const r = await api.call("POST", `/configs/${c.id}/test`);
      expect(r.body.data).to.include({ statusCode: 503, status: "failed" });
      receiver.respond = (_req, res) => res.writeHead(200).end();
      expect((await api.call("POST", `/configs/${UNKNOWN}/test`)).status).to.equal(404);
    });
  });

  describe("attempts and deliveries", () => {
    it("lists a config's attempts newest first, paged, and a delivery's attempts", async () => {
      const receiver = await new Receiver().start();
      try {
        const c = await create({ endpoint: receiver.url });
        const webhookIds: string[] = [];
        for (let i = 0; i < 3; i++)
          webhookIds.push((await api.call("POST", `/configs/${c.id}/test`)).body.data.webhookID);
        const first = await api.call("GET", `/configs/${c.id}/attempts?pageSize=2`);
        expect(first.status).to.equal(200);
        expect(first.body.cursor.data.map((a: { webhookID: string }) => a.webhookID)).to.deep.equal(
          webhookIds.slice(1).reverse(),
        );
        expect(first.body.cursor.hasMore).to.equal(true);
        const second = await api.call(
          "GET",
          `/configs/${c.id}/attempts?pageSize=2&cursor=${first.body.cursor.next}`,
        );
        expect(second.body.cursor.data.map((a: { webhookID: string }) => a.webhookID)).to.deep.equal([
          webhookIds[0],
        ]);
        expect(second.body.cursor.hasMore).to.equal(false);
        const one = await api.call("GET", `/webhooks/${webhookIds[0]}/attempts`);
        expect(one.body.cursor.data).to.have.length(1);
        expect((await api.call("GET", `/webhooks/${UNKNOWN}`)).status).to.equal(404);
        expect((await api.call("GET", `/webhooks/${UNKNOWN}/attempts`)).status).to.equal(404);
        expect((await api.call("GET", `/configs/${UNKNOWN}/attempts`)).status).to.equal(404);
      } finally {
        await receiver.stop();
      }
    });
  });

  describe("/openapi.json", () => {
    it("is a valid OpenAPI 3.1 document covering every route", async () => {
      const { Validator } = await import("@seriousme/openapi-schema-validator");
      const doc = (await api.call("GET", "/openapi.json")).body;
      const result = await new Validator().validate(doc);
      expect(result.errors ?? [], JSON.stringify(result.errors)).to.deep.equal([]);
      expect(result.valid).to.equal(true);
      expect(Object.keys(doc.paths)).to.include.members([
        "/configs",
        "/configs/{id}",
        "/configs/{id}/activate",
        "/configs/{id}/deactivate",
        "/configs/{id}/secret/change",
        "/configs/{id}/test",
        "/configs/{id}/attempts",
        "/webhooks/{webhookId}",
        "/webhooks/{webhookId}/attempts",
      ]);
    });
  });
});

describe("configs REST API when the database fails", function () {
  this.timeout(120_000);

  it("answers 500 with a JSON error body when a query fails", async () => {
    const api = await startWebhooks();
    try {
      const client = new pg.Client({ connectionString: api.db.url });
      await client.connect();
      await client.query("ALTER TABLE configs RENAME TO configs_gone");
      await client.end();
      const r = await api.call("GET", "/configs");
      expect(r.status).to.equal(500);
      expect(r.body).to.deep.equal({
        errorCode: "INTERNAL",
        errorMessage: "internal error; see the service logs",
      });
      await api.process.waitForOutput('"msg":"request failed"');
    } finally {
      await api.stop();
    }
  });

  it("reports an unreachable database in /_healthcheck with 503 naming it", async () => {
    const api = await startWebhooks();
    const admin = new pg.Client({ connectionString: api.db.url });
    await admin.connect();
    try {
      await admin.query(`REVOKE CONNECT ON DATABASE "${api.db.name}" FROM PUBLIC, webhooks`);
      await admin.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
        [api.db.name],
      );
      const res = await fetch(`${api.url}/_healthcheck`);
      expect(res.status).to.equal(503);
      const body = (await res.json()) as { status: string; checks: Record<string, string> };
      expect(body.status).to.equal("unavailable");
      expect(body.checks.database).to.match(/^error: /);
      expect(body.checks.temporal).to.equal("ok");
    } finally {
      await admin.query(`GRANT CONNECT ON DATABASE "${api.db.name}" TO PUBLIC, webhooks`);
      await admin.end();
      await api.stop();
    }
  });
});
