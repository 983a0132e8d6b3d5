import { expect } from "chai";
import { XMLParser, XMLValidator } from "fast-xml-parser";
import { PrismaEntityManager } from "../../entity/prisma/prisma-entity-manager.js";
import type { RequestMap } from "../../entity/server/request-map.js";
import { EntityServer } from "../../entity/server/server.js";
import { attemptData, closeHarness, type Harness, openHarness, testServer } from "./support.js";

const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "@", parseTagValue: false });

/** Parses an XML answer with a real parser after checking it is well-formed. */
// biome-ignore lint/suspicious/noExplicitAny: parsed XML is walked freely in assertions
function parseXml(body: string): Record<string, any> {
  expect(XMLValidator.validate(body), body).to.equal(true);
  return xml.parse(body);
}

describe("entity server over Prisma and PostgreSQL", () => {
  let h: Harness;
  let server: EntityServer;
  let configId: string;

  before(async () => {
    h = await openHarness();
    server = testServer(h);
    const config = await h.prisma.config.create({
      data: {
        name: "first",
        endpoint: "http://a.test/hook",
        eventTypes: ["ledger.committed"],
        secret: "top-secret",
      },
    });
    configId = config.id;
    for (let n = 0; n < 3; n++) await h.prisma.attempt.create({ data: attemptData(configId, n) });
  });
  after(() => closeHarness(h));

  const run = (map: RequestMap) => server.handle(map);

  it("get renders an XML document rooted at the alias with one element per field, secrets left out", async () => {
    const res = await run({
      _method: "get",
      _format: "xml",
      _entity: "config",
      _action: "get",
      _id: configId,
    });
    expect(res.status).to.equal(200);
    expect(res.contentType).to.match(/^application\/xml/);
    const doc = parseXml(res.body);
    expect(Object.keys(doc)).to.deep.equal(["?xml", "config"]);
    expect(doc.config.id).to.equal(configId);
    expect(doc.config.name).to.equal("first");
    expect(doc.config.eventTypes.item).to.equal("ledger.committed");
    expect(doc.config.active["#text"]).to.equal("true");
    expect(res.body).not.to.include("secret");
    expect(res.body).not.to.include("top-secret");
  });

  it("execute() returns the body as a string, using the constructor's request map", async () => {
    const s = new EntityServer(h.manager, {
      _format: "json",
      _entity: "config",
      _action: "get",
      _id: configId,
    });
    s.setEntityAlias("Config", "config", { hidden: ["secret", "previousSecret"] });
    const body = await s.execute();
    expect(typeof body).to.equal("string");
    const json = JSON.parse(body);
    expect(json.id).to.equal(configId);
    expect(json).not.to.have.property("secret");
    expect(json).not.to.have.property("previousSecret");
  });

  it("lists with equality filters, stable order and both paging styles", async () => {
    const all = JSON.parse((await run({ _entity: "attempt", _action: "list", _format: "json" })).body);
    expect(all).to.have.length(3);
    const ids = all.map((a: { id: string }) => a.id);
    expect(ids).to.deep.equal([...ids].sort());
    const failed = JSON.parse((await run({ _entity: "attempt", _action: "list", status: "failed" })).body);
    expect(failed.map((a: { retryAttempt: number }) => a.retryAttempt).sort()).to.deep.equal([1, 2]);
    const byInt = JSON.parse((await run({ _entity: "attempt", _action: "list", statusCode: "502" })).body);
    expect(byInt).to.have.length(1);
    expect(byInt[0].statusCode).to.equal(502);
    const page2 = JSON.parse(
      (await run({ _entity: "attempt", _action: "list", _page: "2", _max_per_page: "2" })).body,
    );
    expect(page2.map((a: { id: string }) => a.id)).to.deep.equal([ids[2]]);
    const window = JSON.parse(
      (await run({ _entity: "attempt", _action: "list", _first: "1", _max: "1" })).body,
    );
    expect(window.map((a: { id: string }) => a.id)).to.deep.equal([ids[1]]);
  });

  it("lists in XML as a collection whose children are named after the alias", async () => {
    const res = await run({ _entity: "attempt", _action: "list", _format: "xml", statusCode: "500" });
    const doc = parseXml(res.body);
    expect(doc.attempt["@type"]).to.equal("collection");
    expect(doc.attempt["@count"]).to.equal("1");
    expect(doc.attempt.attempt.statusCode["#text"]).to.equal("500");
    expect(doc.attempt.attempt.error["@nil"]).to.equal("true");
    expect(doc.attempt.attempt.config["@type"]).to.equal("object");
  });

  it("inserts, updates and deletes, returning the entity each time", async () => {
    const inserted = await run({
      _method: "put",
      _entity: "config",
      _format: "json",
      endpoint: "http://b.test",
      eventTypes: ["a", "b"],
      secret: "s2",
      active: "false",
    });
    expect(inserted.status).to.equal(201);
    const row = JSON.parse(inserted.body);
    expect(row).to.include({ endpoint: "http://b.test", active: false, name: "" });
    expect(row.eventTypes).to.deep.equal(["a", "b"]);
    expect(row).not.to.have.property("secret");
    expect((await h.prisma.config.findUnique({ where: { id: row.id } }))?.secret).to.equal("s2");

    const updated = await run({
      _method: "post",
      _entity: "config",
      _id: row.id,
      name: "renamed",
      eventTypes: "only",
    });
    expect(updated.status).to.equal(200);
    expect(JSON.parse(updated.body)).to.include({ name: "renamed", endpoint: "http://b.test" });
    expect(JSON.parse(updated.body).eventTypes).to.deep.equal(["only"]);

    const deleted = await run({ _method: "delete", _entity: "config", _id: row.id, _format: "xml" });
    expect(parseXml(deleted.body).config.name).to.equal("renamed");
    expect(await h.prisma.config.findUnique({ where: { id: row.id } })).to.equal(null);
  });

  describe("malformed requests get typed errors in the requested format, never a crash", () => {
    const cases: [string, RequestMap, number, string][] = [
      ["unknown alias", { _entity: "nope", _action: "list" }, 404, "UNKNOWN_ENTITY"],
      ["missing alias", { _action: "list" }, 400, "VALIDATION"],
      ["unknown action", { _entity: "config", _action: "explode" }, 404, "UNKNOWN_ACTION"],
      [
        "action inherited from Object.prototype",
        { _entity: "config", _action: "toString" },
        404,
        "UNKNOWN_ACTION",
      ],
      [
        "unknown id",
        { _entity: "config", _action: "get", _id: "00000000-0000-0000-0000-000000000000" },
        404,
        "NOT_FOUND",
      ],
      ["id that is not a uuid", { _entity: "config", _action: "get", _id: "nope" }, 404, "NOT_FOUND"],
      ["get without id", { _entity: "config", _action: "get" }, 400, "VALIDATION"],
      [
        "update of unknown id",
        { _entity: "config", _action: "update", _id: "nope", name: "x" },
        404,
        "NOT_FOUND",
      ],
      [
        "delete of unknown id",
        { _entity: "config", _action: "delete", _id: "00000000-0000-0000-0000-000000000000" },
        404,
        "NOT_FOUND",
      ],
      ["unknown field filter", { _entity: "config", _action: "list", colour: "red" }, 400, "VALIDATION"],
      [
        "filter on a hidden field",
        { _entity: "config", _action: "list", secret: "top-secret" },
        400,
        "VALIDATION",
      ],
      ["filter on a JSON field", { _entity: "attempt", _action: "list", config: "{}" }, 400, "VALIDATION"],
      [
        "integer field given text",
        { _entity: "attempt", _action: "list", statusCode: "five" },
        400,
        "VALIDATION",
      ],
      [
        "integer out of range",
        { _entity: "attempt", _action: "list", statusCode: "99999999999" },
        400,
        "VALIDATION",
      ],
      [
        "boolean field given text",
        { _entity: "config", _action: "list", active: "maybe" },
        400,
        "VALIDATION",
      ],
      [
        "date field given text",
        { _entity: "config", _action: "list", createdAt: "yesterday" },
        400,
        "VALIDATION",
      ],
      [
        "two values for one field",
        { _entity: "config", _action: "list", name: ["a", "b"] },
        400,
        "VALIDATION",
      ],
      ["bad enum value", { _entity: "attempt", _action: "list", status: "exploded" }, 400, "VALIDATION"],
      ["negative page", { _entity: "config", _action: "list", _page: "-1" }, 400, "VALIDATION"],
      ["page too large", { _entity: "config", _action: "list", _max_per_page: "100000" }, 400, "VALIDATION"],
      [
        "both paging styles",
        { _entity: "config", _action: "list", _page: "1", _first: "0" },
        400,
        "VALIDATION",
      ],
      ["unknown reserved key", { _entity: "config", _action: "list", _sort: "id" }, 400, "VALIDATION"],
      [
        "object as id",
        { _entity: "config", _action: "get", _id: {} as unknown as string },
        400,
        "VALIDATION",
      ],
      ["unsupported format", { _entity: "config", _action: "list", _format: "yaml" }, 406, "NOT_ACCEPTABLE"],
      [
        "insert missing a required field",
        { _entity: "config", _action: "insert", endpoint: "http://c" },
        400,
        "VALIDATION",
      ],
      [
        "insert with unknown field",
        { _entity: "config", _action: "insert", colour: "red" },
        400,
        "VALIDATION",
      ],
      ["write on a read-only alias", { _entity: "attempt", _action: "delete", _id: "x" }, 405, "READ_ONLY"],
      [
        "update changing the id",
        {
          _entity: "config",
          _action: "update",
          _id: "0b6f3c1e-2a4d-4e8f-9a1b-3c5d7e9f1a2b",
          id: "7d8e9f0a-1b2c-4d3e-8f4a-5b6c7d8e9f0a",
        },
        400,
        "VALIDATION",
      ],
      ["method implying no action", { _method: "delete", _entity: "config" }, 404, "UNKNOWN_ACTION"],
    ];
    for (const [name, map, status, code] of cases) {
      it(`${name} → ${status} ${code}`, async () => {
        for (const format of ["json", "xml"] as const) {
          if (map._format === "yaml" && format === "xml") continue;
          const res = await run({ _format: format, ...map });
          expect(res.status, res.body).to.equal(status);
          expect(res.errorCode).to.equal(code);
          if (res.format === "xml") {
            expect(parseXml(res.body).error.code).to.equal(code);
          } else {
            expect(JSON.parse(res.body).error.code).to.equal(code);
          }
        }
      });
    }

    it("a duplicate primary key is a CONFLICT and leaves the stored row untouched", async () => {
      const res = await run({
        _entity: "config",
        _action: "insert",
        id: configId,
        endpoint: "http://dup",
        secret: "x",
      });
      expect(res.status).to.equal(409);
      expect(res.errorCode).to.equal("CONFLICT");
      expect((await h.prisma.config.findUnique({ where: { id: configId } }))?.endpoint).to.equal(
        "http://a.test/hook",
      );
    });

    it("an unexpected failure is INTERNAL without leaking details", async () => {
      const broken = new EntityServer({
        entityClasses: () => ["X"],
        repository: () => ({
          entityClass: "X",
          identifier: "id",
          fields: [{ name: "id", type: "String", list: false }],
          get: async () => {
            throw new Error("password=hunter2 in a driver message");
          },
          list: async () => [],
          insert: async () => ({}),
          update: async () => null,
          delete: async () => null,
        }),
      }).setEntityAlias("X", "x");
      const res = await broken.handle({ _entity: "x", _id: "1", _format: "xml" });
      expect(res.status).to.equal(500);
      expect(parseXml(res.body).error.code).to.equal("INTERNAL");
      expect(res.body).not.to.include("hunter2");
    });
  });

  describe("custom actions and authentication", () => {
    it("runs registered actions, per-entity ones before global ones", async () => {
      const s = testServer(h)
        .registerAction(
          "count",
          async (ctx) => (await ctx.binding.repository.list({ where: {}, skip: 0, take: 1000 })).length,
        )
        .registerAction("ping", () => "global")
        .addEntityAction("config", "ping", () => "config-specific");
      const count = await s.handle({ _entity: "attempt", _action: "count", _format: "xml" });
      expect(parseXml(count.body).attempt["#text"]).to.equal("3");
      expect(JSON.parse((await s.handle({ _entity: "config", _action: "ping" })).body)).to.equal(
        "config-specific",
      );
      expect(JSON.parse((await s.handle({ _entity: "attempt", _action: "ping" })).body)).to.equal("global");
    });

    it("refuses custom write actions on read-only aliases", async () => {
      let ran = false;
      const s = testServer(h).registerAction(
        "purge",
        () => {
          ran = true;
          return "done";
        },
        { writes: true },
      );
      const res = await s.handle({ _entity: "attempt", _action: "purge" });
      expect(res.status).to.equal(405);
      expect(ran).to.equal(false);
    });

    it("checks credentials before any action runs", async () => {
      let ran = 0;
      const s = testServer(h)
        .registerAction("touch", () => {
          ran++;
          return "ok";
        })
        .setCredentials("admin", "s3cret");
      const none = await s.handle({ _entity: "config", _action: "touch" });
      const wrong = await s.handle({
        _entity: "config",
        _action: "touch",
        _username: "admin",
        _password: "nope",
      });
      const unknownAlias = await s.handle({ _entity: "nope", _action: "touch" });
      expect([none.status, wrong.status, unknownAlias.status]).to.deep.equal([401, 401, 401]);
      expect(ran).to.equal(0);
      const ok = await s.handle({
        _entity: "config",
        _action: "touch",
        _username: "admin",
        _password: "s3cret",
      });
      expect(ok.status).to.equal(200);
      expect(ran).to.equal(1);
    });

    it("passes alias, action and id to a custom authenticator", async () => {
      const seen: unknown[] = [];
      const s = testServer(h).setAuthenticator((r) => {
        seen.push(r);
        return r.action === "get";
      });
      expect((await s.handle({ _entity: "config", _id: configId })).status).to.equal(200);
      expect((await s.handle({ _entity: "config", _action: "list" })).status).to.equal(401);
      expect(seen[0]).to.deep.equal({ alias: "config", action: "get", id: configId });
    });
  });

  describe("entity manager", () => {
    it("serves any model of the schema with its discovered field types", () => {
      const manager = new PrismaEntityManager(h.prisma);
      expect(manager.entityClasses()).to.include.members(["Config", "Attempt"]);
      const attempt = manager.repository("Attempt");
      const types = Object.fromEntries(attempt.fields.map((f) => [f.name, `${f.type}${f.list ? "[]" : ""}`]));
      expect(types).to.include({ statusCode: "Int", config: "Json", status: "Enum", createdAt: "DateTime" });
      expect(manager.repository("Config").fields.find((f) => f.name === "eventTypes")).to.deep.equal({
        name: "eventTypes",
        type: "String",
        list: true,
      });
    });

    it("rejects unknown models, unknown identifiers and identifiers that are not unique", () => {
      const manager = new PrismaEntityManager(h.prisma);
      expect(() => manager.repository("Nope")).to.throw(/unknown Prisma model "Nope"/);
      expect(() => manager.repository("Config", { identifier: "colour" })).to.throw(/not a field/);
      expect(() => manager.repository("Config", { identifier: "name" })).to.throw(/@id or @unique/);
      expect(() => new EntityServer(manager).setEntityAlias("Config", "bad alias")).to.throw(/invalid alias/);
      expect(() => new EntityServer(manager).setEntityAlias("Config", "c", { hidden: ["nope"] })).to.throw(
        /hidden field/,
      );
    });

    it("answers concurrent gets (batched into one query) exactly like single lookups", async () => {
      const repo = new PrismaEntityManager(h.prisma).repository("Config");
      const missing = "00000000-0000-0000-0000-000000000000";
      const ids = [configId, configId.toUpperCase(), "nope", missing, configId];
      const rows = await Promise.all(ids.map((id) => repo.get(id)));
      expect(rows.map((r) => r?.id ?? null)).to.deep.equal([configId, configId, null, null, configId]);
      const clean = await Promise.all([configId, missing].map((id) => repo.get(id)));
      expect(clean.map((r) => r?.id ?? null)).to.deep.equal([configId, null]);
    });

    it("takes explicit field types over discovered ones", async () => {
      const manager = new PrismaEntityManager(h.prisma);
      const s = new EntityServer(manager).setEntityAlias("Config", "cfg", {
        fields: { eventTypes: "String[]" },
        hidden: ["secret", "previousSecret"],
      });
      const res = await s.handle({ _entity: "cfg", _id: configId });
      expect(JSON.parse(res.body).eventTypes).to.deep.equal(["ledger.committed"]);
    });
  });
});
