import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { sql } from "../support/poison.js";
import { startWebhooks, type WebhooksUnderTest } from "../support/webhooks-server.js";

const PAID_SCHEMA = {
  type: "object",
  required: ["id", "amount"],
  properties: {
    id: { type: "string", pattern: "^ord_[0-9]+$" },
    amount: { type: "number", minimum: 0 },
    paidAt: { type: "string", format: "date-time" },
  },
};

/** The event catalog's routes against the real server and PostgreSQL. */
describe("event catalog API (/event-types)", function () {
  this.timeout(120_000);
  let api: WebhooksUnderTest;

  before(async () => {
    api = await startWebhooks({ args: ["--audit-topic", ""] });
  });
  after(async () => {
    await api?.stop();
  });

  it("creates, reads, lists, replaces and deletes a type", async () => {
    const created = await api.call("PUT", "/event-types/Shop.Order_Paid", {
      description: "an order was paid",
      schema: PAID_SCHEMA,
      example: { id: "ord_1", amount: 12.5 },
    });
    expect(created.status, created.text).to.equal(201);
    const first = created.body.data;
    expect(first).to.include({
      name: "shop.order_paid",
      description: "an order was paid",
      deprecated: false,
    });
    // Kept as written, key order included.
    expect(JSON.stringify(first.schema)).to.equal(JSON.stringify(PAID_SCHEMA));
    expect(first.example).to.deep.equal({ id: "ord_1", amount: 12.5 });

    const got = await api.call("GET", "/event-types/shop.order_paid");
    expect(got.status, got.text).to.equal(200);
    expect(got.body.data).to.deep.equal(first);

    const replaced = await api.call("PUT", "/event-types/shop.order_paid", {
      description: "an order was paid (v2)",
      deprecated: true,
    });
    expect(replaced.status, replaced.text).to.equal(200);
    const second = replaced.body.data;
    expect(second).to.include({
      name: "shop.order_paid",
      description: "an order was paid (v2)",
      deprecated: true,
    });
    // PUT replaces: what the body leaves out is gone.
    expect(second).to.not.have.any.keys("schema", "example");
    expect(second.version).to.be.greaterThan(first.version);
    expect(second.createdAt).to.equal(first.createdAt);
    expect(Date.parse(second.updatedAt)).to.be.at.least(Date.parse(first.updatedAt));

    const listed = await api.call("GET", "/event-types");
    expect(listed.status, listed.text).to.equal(200);
    expect(listed.body.cursor.hasMore).to.equal(false);
    expect(listed.body.cursor.data).to.deep.equal([second]);

    const deleted = await api.call("DELETE", "/event-types/shop.order_paid");
    expect(deleted.status, deleted.text).to.equal(200);
    expect(deleted.body.data).to.deep.equal({ name: "shop.order_paid", deleted: true });
    for (const method of ["GET", "DELETE"]) {
      const gone = await api.call(method, "/event-types/shop.order_paid");
      expect(gone.status, gone.text).to.equal(404);
      expect(gone.body).to.deep.equal({
        errorCode: "NOT_FOUND",
        errorMessage: 'event type "shop.order_paid" is not in the catalog',
      });
    }
  });

  it("pages the list by name", async () => {
    for (const n of ["page.c", "page.a", "page.b"]) {
      expect((await api.call("PUT", `/event-types/${n}`, {})).status).to.equal(201);
    }
    const first = await api.call("GET", "/event-types?pageSize=2");
    expect(first.body.cursor.data.map((t: { name: string }) => t.name)).to.deep.equal(["page.a", "page.b"]);
    expect(first.body.cursor).to.include({ hasMore: true, pageSize: 2 });
    const second = await api.call("GET", `/event-types?pageSize=2&cursor=${first.body.cursor.next}`);
    expect(second.body.cursor.data.map((t: { name: string }) => t.name)).to.deep.equal(["page.c"]);
    expect(second.body.cursor.hasMore).to.equal(false);
    for (const n of ["page.a", "page.b", "page.c"]) await api.call("DELETE", `/event-types/${n}`);
  });

  it("refuses bad input with a 400 naming what is wrong, and stores nothing", async () => {
    const kept = await api.call("PUT", "/event-types/bad.kept", { description: "kept", schema: PAID_SCHEMA });
    expect(kept.status, kept.text).to.equal(201);
    let deep: Record<string, unknown> = { type: "string" };
    for (let i = 0; i < 70; i++) deep = { type: "array", items: deep };
    const huge = { type: "object", description: "x".repeat(140 * 1024) };
    const cases: [string, string, unknown, RegExp][] = [
      ["PUT", "/event-types/ledger", {}, /name must be an event type <app>.<type>.*got "ledger"/],
      ["PUT", "/event-types/ledger.*", {}, /name must be an event type .*no wildcard/],
      ["PUT", `/event-types/a.${"b".repeat(300)}`, {}, /at most 255 characters/],
      ["GET", "/event-types/no%20dots", undefined, /name must be an event type/],
      ["PUT", "/event-types/bad.kept", { descripton: "typo" }, /unknown field "descripton"/],
      ["PUT", "/event-types/bad.kept", { description: 5 }, /description must be of type string/],
      ["PUT", "/event-types/bad.kept", { deprecated: "yes" }, /deprecated must be of type boolean/],
      ["PUT", "/event-types/bad.kept", { schema: 5 }, /schema must be a JSON object or of type boolean/],
      ["PUT", "/event-types/bad.kept", { schema: [] }, /schema must be a JSON object or of type boolean/],
      [
        "PUT",
        "/event-types/bad.kept",
        { schema: { type: "objekt" } },
        /schema is not a valid JSON Schema: schema.type must be one of "array"/,
      ],
      [
        "PUT",
        "/event-types/bad.kept",
        { schema: { properties: { amount: { minimum: "zero" } } } },
        /schema.properties.amount.minimum must be of type number/,
      ],
      [
        "PUT",
        "/event-types/bad.kept",
        { schema: { type: "object", propertis: {} } },
        /schema cannot be compiled: strict mode: unknown keyword: "propertis"/,
      ],
      [
        "PUT",
        "/event-types/bad.kept",
        { schema: { $ref: "https://schemas.example.com/order.json" } },
        /schema cannot be compiled: can't resolve reference https:\/\/schemas.example.com\/order.json/,
      ],
      [
        "PUT",
        "/event-types/bad.kept",
        { schema: { type: "string", pattern: "^(?=a)b" } },
        /schema cannot be compiled: .*unsupported Perl syntax/,
      ],
      [
        "PUT",
        "/event-types/bad.kept",
        { schema: { $schema: "http://json-schema.org/draft-07/schema#" } },
        /schema.\$schema must be https:\/\/json-schema.org\/draft\/2020-12\/schema/,
      ],
      ["PUT", "/event-types/bad.kept", { schema: deep }, /schema nests 71 levels deep; at most 64/],
      ["PUT", "/event-types/bad.kept", { schema: huge }, /schema is \d+ bytes as JSON; at most 131072/],
      [
        "PUT",
        "/event-types/bad.kept",
        { schema: PAID_SCHEMA, example: { id: "ord_1", amount: "12" } },
        /example does not match the schema: example.amount must be of type number/,
      ],
      [
        "PUT",
        "/event-types/bad.kept",
        { schema: PAID_SCHEMA, example: { id: "ord_1", amount: 1, paidAt: "yesterday" } },
        /example.paidAt must match format "date-time"/,
      ],
      [
        "PUT",
        "/event-types/bad.kept",
        { example: "x".repeat(65 * 1024) },
        /example is \d+ bytes as JSON; at most 65536/,
      ],
      ["PUT", "/event-types/bad.kept", '{"description":"a","description":"b"}', /description/],
      ["PUT", "/event-types/bad.kept", "{not json", /malformed JSON body/],
      ["PUT", "/event-types/bad.kept?force=1", {}, /unknown query parameter "force"/],
      ["GET", "/event-types?pageSize=0", undefined, /pageSize must be an integer from 1 to 1000/],
      ["GET", "/event-types?cursor=%%%", undefined, /cursor is not a value this API returned/],
    ];
    for (const [method, path, body, says] of cases) {
      const r = await api.call(method, path, body);
      expect(r.status, `${method} ${path}: ${r.text}`).to.equal(400);
      expect(r.body.errorCode, r.text).to.equal("VALIDATION");
      expect(r.body.errorMessage, r.text).to.match(says);
    }
    const empty = await fetch(`${api.url}/event-types/bad.kept`, { method: "PUT" });
    expect(empty.status).to.equal(400);
    expect(((await empty.json()) as { errorMessage: string }).errorMessage).to.equal(
      "request body must not be empty",
    );
    const text = await fetch(`${api.url}/event-types/bad.kept`, {
      method: "PUT",
      headers: { "content-type": "text/plain" },
      body: "{}",
    });
    expect(text.status).to.equal(400);
    expect(((await text.json()) as { errorMessage: string }).errorMessage).to.match(
      /Content-Type must be application\/json/,
    );
    const tooLarge = await api.call("PUT", "/event-types/bad.kept", { description: "x".repeat(300 * 1024) });
    expect(tooLarge.status, tooLarge.text).to.equal(413);

    const after = await api.call("GET", "/event-types/bad.kept");
    expect(after.body.data).to.deep.equal(kept.body.data);
    const rows = await sql(api, "SELECT name FROM event_types ORDER BY name");
    expect(rows.map((r) => r.name)).to.deep.equal(["bad.kept"]);
    await api.call("DELETE", "/event-types/bad.kept");
  });

  it("warns about subscriptions the catalog does not list, once it lists any", async () => {
    const config = { endpoint: "https://receiver.example.com/hook" };
    // An empty catalog: the responses of the Formance-compatible API, unchanged.
    const before = await api.call("POST", "/configs", { ...config, eventTypes: ["any.thing"] });
    expect(before.status, before.text).to.equal(200);
    expect(Object.keys(before.body)).to.deep.equal(["data"]);

    await api.call("PUT", "/event-types/shop.order_paid", { description: "paid" });
    await api.call("PUT", "/event-types/shop.order_refunded", { description: "refunded" });
    await api.call("PUT", "/event-types/legacy.order_paid", { description: "old", deprecated: true });

    const known = await api.call("POST", "/configs", {
      ...config,
      eventTypes: ["shop.order_paid", "shop.*"],
    });
    expect(known.status, known.text).to.equal(200);
    expect(Object.keys(known.body)).to.deep.equal(["data"]);

    const warned = await api.call("POST", "/configs", {
      ...config,
      eventTypes: ["shop.order_payed", "ledger.*", "legacy.order_paid", "legacy.*", "shop.order_paid"],
    });
    expect(warned.status, warned.text).to.equal(200);
    expect(warned.body.data.eventTypes).to.have.length(5);
    expect(warned.body.warnings).to.deep.equal([
      'eventTypes: "shop.order_payed" is not in the event catalog (GET /event-types)',
      'eventTypes: "ledger.*" matches no type in the event catalog',
      'eventTypes: "legacy.order_paid" is deprecated in the event catalog',
      'eventTypes: "legacy.*" matches only deprecated types in the event catalog',
    ]);
    // Accepted as sent: the config is stored and matches as usual.
    const stored = await api.call("GET", `/configs/${warned.body.data.id}`);
    expect(stored.body.data.eventTypes).to.deep.equal(warned.body.data.eventTypes);

    const updated = await api.call("PUT", `/configs/${known.body.data.id}`, {
      ...config,
      eventTypes: ["shop.order_shipped"],
    });
    expect(updated.status, updated.text).to.equal(200);
    expect(updated.body.warnings).to.deep.equal([
      'eventTypes: "shop.order_shipped" is not in the event catalog (GET /event-types)',
    ]);
    for (const n of ["shop.order_paid", "shop.order_refunded", "legacy.order_paid"])
      await api.call("DELETE", `/event-types/${n}`);
  });

  it("is in the OpenAPI document", async () => {
    const doc = (await api.call("GET", "/openapi.json")).body;
    expect(Object.keys(doc.paths)).to.include.members(["/event-types", "/event-types/{name}"]);
    expect(Object.keys(doc.paths["/event-types/{name}"])).to.include.members(["get", "put", "delete"]);
    expect(doc.paths["/configs"].post.responses["200"].content["application/json"].schema).to.deep.equal({
      $ref: "#/components/schemas/ConfigWritten",
    });
    expect(doc.components.schemas.ConfigWritten.properties).to.have.keys("data", "warnings");
  });
});

describe("event catalog API with authentication on", function () {
  this.timeout(120_000);
  let api: WebhooksUnderTest;
  let jwks: Server;
  let sign: (scope: string) => Promise<string>;

  before(async () => {
    const { publicKey, privateKey } = await generateKeyPair("ES256");
    const keys = { keys: [{ ...(await exportJWK(publicKey)), kid: "catalog", alg: "ES256" }] };
    jwks = createServer((_req, res) =>
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(keys)),
    );
    await new Promise<void>((resolve) => jwks.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks`;
    sign = (scope) =>
      new SignJWT({ scope })
        .setProtectedHeader({ alg: "ES256", kid: "catalog" })
        .setExpirationTime("5m")
        .sign(privateKey);
    api = await startWebhooks({ args: ["--audit-topic", "", "--auth-jwks-url", url] });
  });
  after(async () => {
    await api?.stop();
    jwks?.close();
  });

  it("reads with the read scope and writes only with the write scope", async () => {
    const as = async (scope: string) => ({ authorization: `Bearer ${await sign(scope)}` });
    expect((await api.call("GET", "/event-types")).status).to.equal(401);
    const denied = await api.call("PUT", "/event-types/auth.checked", {}, await as("webhooks:read"));
    expect(denied.status, denied.text).to.equal(403);
    expect(denied.body.errorMessage).to.equal("token lacks the scope webhooks:write");
    expect(
      (await api.call("PUT", "/event-types/auth.checked", {}, await as("webhooks:write"))).status,
    ).to.equal(201);
    expect(
      (await api.call("GET", "/event-types/auth.checked", undefined, await as("webhooks:read"))).status,
    ).to.equal(200);
    expect((await api.call("GET", "/event-types", undefined, await as("webhooks:read"))).status).to.equal(
      200,
    );
    expect(
      (await api.call("DELETE", "/event-types/auth.checked", undefined, await as("webhooks:read"))).status,
    ).to.equal(403);
    expect(
      (await api.call("DELETE", "/event-types/auth.checked", undefined, await as("webhooks:write"))).status,
    ).to.equal(200);
  });
});
