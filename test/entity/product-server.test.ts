import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { PrismaPg } from "@prisma/adapter-pg";
import { expect } from "chai";
import pg from "pg";
import { ConfigSecrets } from "../../core/config-secrets.js";
import { isSealed } from "../../core/sealing.js";
import { newKeyLine, parseKeyFile } from "../../core/secrets-key-file.js";
import { EntityClient } from "../../entity/client/client.js";
import type { EntityConfiguration } from "../../entity/client/configuration.js";
import { Entity } from "../../entity/client/entity.js";
import { EntityResponseError } from "../../entity/client/errors.js";
import { PrismaEntityManager } from "../../entity/prisma/prisma-entity-manager.js";
import { bindProductTables } from "../../entity/product-tables.js";
import { EntityServer } from "../../entity/server/server.js";
import { PrismaClient } from "../../generated/prisma/client.js";
import { createTestDatabase, type TestDatabase } from "../support/postgres.js";
import { start, stop } from "./command.js";
import { serveHttp } from "./support.js";

// The product's tables as the entity-server command binds them (config
// writable): writes pass the webhooks API's validation, updatedAt moves on
// every update, malformed ids never reach PostgreSQL.

const SECRET = "bmV3LXNlY3JldC12YWx1ZS0yNC1ieXRl";

describe("entity server over the product tables", function () {
  this.timeout(60_000);
  let db: TestDatabase;
  let sql: pg.Client;
  let prisma: PrismaClient;
  let queries = 0;
  let http: Awaited<ReturnType<typeof serveHttp>>;
  const secrets = new ConfigSecrets(parseKeyFile(`${newKeyLine("entity-test")}\n`, "a test key"));

  const req = (method: string, path: string, body?: unknown) =>
    fetch(`${http.baseUrl}${path}`, {
      method,
      ...(body === undefined
        ? {}
        : { body: JSON.stringify(body), headers: { "content-type": "application/json" } }),
    });
  const configRows = async () => (await sql.query("SELECT * FROM configs ORDER BY id")).rows;

  before(async () => {
    db = await createTestDatabase();
    sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
    const client = new PrismaClient({
      adapter: new PrismaPg({ connectionString: db.url, max: 2 }),
      log: [{ emit: "event", level: "query" }],
    });
    client.$on("query", () => {
      queries++;
    });
    prisma = client;
    const server = new EntityServer(new PrismaEntityManager(prisma));
    bindProductTables(server, ["config"], secrets);
    http = await serveHttp(server);
  });
  after(async () => {
    await http?.close();
    await prisma?.$disconnect();
    await sql?.end();
    await db?.drop();
  });

  it("refuses the configs the webhooks API refuses, naming the field, and stores nothing", async () => {
    const base = { endpoint: "http://a.test/hook", eventTypes: ["a.b"] };
    const cases: [unknown, string, string][] = [
      [{ ...base, endpoint: "not a url" }, "endpoint", "endpoint must be an absolute http(s) URL"],
      [{ ...base, endpoint: "ftp://a.test" }, "endpoint", "endpoint must use http or https"],
      [{ ...base, endpoint: "http://user:pw@a.test" }, "endpoint", "credentials"],
      [{ ...base, endpoint: "http://[fe80::1]/" }, "endpoint", "egress policy"],
      [{ ...base, secret: "short" }, "secret", "secret must be"],
      [{ ...base, eventTypes: ["nodot"] }, "eventTypes", "eventTypes[0] must be"],
      [{ ...base, eventTypes: [] }, "eventTypes", "eventTypes must not be empty"],
      [{ endpoint: "http://a.test" }, "eventTypes", 'missing required field "eventTypes"'],
      [{ ...base, name: "x".repeat(256) }, "name", "name must be at most 255"],
      [{ ...base, updatedAt: "2020-01-01T00:00:00Z" }, "updatedAt", "maintained by the service"],
      [{ ...base, id: "0b6f3c1e-2a4d-4e8f-9a1b-3c5d7e9f1a2b" }, "id", "maintained by the service"],
    ];
    for (const [body, field, says] of cases) {
      const res = await req("PUT", "/config.json", body);
      const { error } = (await res.json()) as { error: { code: string; message: string; field?: string } };
      expect([res.status, error.code, error.field], JSON.stringify(body)).to.deep.equal([
        400,
        "VALIDATION",
        field,
      ]);
      expect(error.message, JSON.stringify(body)).to.include(says);
    }
    expect(await configRows()).to.deep.equal([]);
  });

  it("stores configs as the webhooks API would: normalized endpoint and event types, a generated secret", async () => {
    const res = await req("PUT", "/config.json", {
      endpoint: "HTTP://A.Test:80/hook",
      eventTypes: [" Ledger.Committed ", "ledger.committed", "UPPER.*"],
    });
    expect(res.status).to.equal(201);
    const [row] = await configRows();
    expect(row.endpoint).to.equal("http://a.test/hook");
    expect(row.event_types).to.deep.equal(["ledger.committed", "upper.*"]);
    // Sealed as the webhooks API seals it, bound to its row.
    expect(isSealed(row.secret)).to.equal(true);
    expect(secrets.open(row.id, "secret", row.secret)).to.match(/^[A-Za-z0-9+/]{32}$/);
    await sql.query("DELETE FROM configs");
  });

  it("checks an update as the config it would leave, and refreshes updatedAt", async () => {
    const created = (await (
      await req("PUT", "/config.json", { endpoint: "http://u.test", eventTypes: ["a.b"], secret: SECRET })
    ).json()) as {
      id: string;
      updatedAt: string;
    };
    await sql.query(
      "UPDATE configs SET previous_secret = $1, previous_secret_expires_at = now() + interval '1 hour'",
      [SECRET],
    );
    const before = await configRows();
    const bad = await req("PATCH", `/config/${created.id}.json`, { eventTypes: ["nodot"] });
    expect(bad.status).to.equal(400);
    expect(await configRows()).to.deep.equal(before);

    await new Promise((r) => setTimeout(r, 20));
    const ok = await req("PATCH", `/config/${created.id}.json`, {
      name: "renamed",
      secret: SECRET.replace("b", "c"),
    });
    const updated = (await ok.json()) as { name: string; updatedAt: string; endpoint: string };
    expect([ok.status, updated.name, updated.endpoint]).to.deep.equal([200, "renamed", "http://u.test/"]);
    expect(new Date(updated.updatedAt).getTime()).to.be.greaterThan(new Date(created.updatedAt).getTime());
    const [row] = await configRows();
    // A secret written by the caller ends the rotation overlap, as PUT /configs/{id} does.
    expect([row.previous_secret, row.previous_secret_expires_at]).to.deep.equal([null, null]);
    expect(secrets.open(row.id, "secret", row.secret)).to.equal(SECRET.replace("b", "c"));
  });

  it("lets the entity client send maintained fields back unchanged (round trip of a saved entity)", async () => {
    class WebhookConfig extends Entity {
      id?: string;
      name = "";
      endpoint = "";
      eventTypes: string[] = [];
      active = true;
      createdAt?: Date;
      updatedAt?: Date;
      static override configure(c: EntityConfiguration) {
        c.setUrl(http.baseUrl).setName("config").setResponseType("xml").setFields({
          eventTypes: "string[]",
          createdAt: "date",
          updatedAt: "date",
        });
      }
    }
    WebhookConfig.useClient(new EntityClient());
    const c = new WebhookConfig();
    c.endpoint = "http://client.test/hook";
    c.eventTypes = ["c.d"];
    await c.save();
    const first = c.updatedAt?.getTime() ?? 0;
    await new Promise((r) => setTimeout(r, 20));
    c.active = false;
    await c.save();
    expect(c.active).to.equal(false);
    expect(c.updatedAt?.getTime()).to.be.greaterThan(first);
  });

  it("refreshes updatedAt on writes from any path, and keeps a value a writer sets itself", async () => {
    const { rows } = await sql.query(
      "INSERT INTO configs (id, endpoint, event_types, secret, updated_at) VALUES (gen_random_uuid(), 'http://sql.test', '{a.b}', $1, '2020-01-01') RETURNING id",
      [SECRET],
    );
    const id = rows[0].id as string;
    const updatedAt = async () =>
      (
        (await sql.query("SELECT updated_at FROM configs WHERE id = $1", [id])).rows[0].updated_at as Date
      ).getTime();
    await sql.query("UPDATE configs SET name = 'plain sql' WHERE id = $1", [id]);
    expect(Date.now() - (await updatedAt())).to.be.lessThan(60_000);
    await sql.query("UPDATE configs SET active = false, updated_at = '2021-06-01T00:00:00Z' WHERE id = $1", [
      id,
    ]);
    expect(await updatedAt()).to.equal(Date.parse("2021-06-01T00:00:00Z"));
    await prisma.attempt.create({
      data: {
        webhookId: id,
        configId: id,
        config: {},
        payload: "{}",
        statusCode: 500,
        retryAttempt: 0,
        status: "failed",
        updatedAt: new Date("2020-01-01"),
      },
    });
    await sql.query("UPDATE attempts SET error = 'closed by an operator'");
    const attempt = await sql.query("SELECT updated_at FROM attempts");
    expect(Date.now() - (attempt.rows[0].updated_at as Date).getTime()).to.be.lessThan(60_000);
  });

  it("answers malformed ids without a query and without a new database connection", async () => {
    const warm = queries;
    await req("GET", "/config.json"); // the pool's connections are open
    expect(queries, "the query counter counts").to.be.greaterThan(warm);
    const backends = async () =>
      (
        await sql.query(
          "SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid() ORDER BY pid",
          [db.name],
        )
      ).rows;
    const pids = await backends();
    const before = queries;
    const ids = [
      "not-a-uuid",
      "0b6f3c1e-2a4d-4e8f-9a1b-3c5d7e9f1a2",
      "'; DROP TABLE configs; --",
      "%00",
      "0b6f3c1e-2a4d-4e8f-9a1b-3c5d7e9f1a2bX",
    ];
    const answers = await Promise.all(ids.map((id) => req("GET", `/config/${encodeURIComponent(id)}.json`)));
    expect(answers.map((a) => a.status)).to.deep.equal(ids.map(() => 404));
    const patch = await req("PATCH", "/config/not-a-uuid.json", { name: "x" });
    const filter = await req("GET", "/attempt.json?configId=nope");
    expect([patch.status, filter.status]).to.deep.equal([404, 400]);
    expect(queries - before).to.equal(0);
    expect(await backends()).to.deep.equal(pids);
  });
});

describe("entity-server command: /_info", function () {
  this.timeout(60_000);
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase();
  });
  after(() => db?.drop());

  it("requires the credentials when --username/--password are set, and stays open without them", async () => {
    const r = await start(["--storage-sqldb-conn-string", db.url, "--username", "ops", "--password", "pw"]);
    try {
      const basic = (s: string) => ({ authorization: `Basic ${Buffer.from(s).toString("base64")}` });
      const none = await fetch(`${r.baseUrl}/_info`);
      expect(none.status).to.equal(401);
      expect(none.headers.get("www-authenticate")).to.include("Basic");
      const text = await none.text();
      expect(text).to.include("UNAUTHENTICATED").and.not.include("config");
      expect((await fetch(`${r.baseUrl}/_info`, { headers: basic("ops:nope") })).status).to.equal(401);
      const xml = await fetch(`${r.baseUrl}/_info`, { headers: { accept: "application/xml" } });
      expect([xml.status, xml.headers.get("content-type")]).to.deep.equal([
        401,
        "application/xml; charset=utf-8",
      ]);
      const ok = await fetch(`${r.baseUrl}/_info`, { headers: basic("ops:pw") });
      expect(ok.status).to.equal(200);
      expect(Object.keys(((await ok.json()) as { aliases: object }).aliases)).to.deep.equal([
        "config",
        "attempt",
      ]);
      expect((await fetch(`${r.baseUrl}/_healthcheck`)).status).to.equal(200);
    } finally {
      await stop(r);
    }
    const open = await start(["--storage-sqldb-conn-string", db.url]);
    try {
      expect((await fetch(`${open.baseUrl}/_info`)).status).to.equal(200);
    } finally {
      await stop(open);
    }
  });
});

describe("entity client: XML with a DTD", () => {
  it("refuses a response that declares entities instead of expanding them", async () => {
    const hostile = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/xml" });
      res.end(
        '<?xml version="1.0"?><!DOCTYPE config [<!ENTITY a "AAAAAAAAAA"><!ENTITY b "&a;&a;&a;&a;&a;">]><config><id>1</id><name>&b;</name></config>',
      );
    });
    await new Promise<void>((r) => hostile.listen(0, "127.0.0.1", r));
    try {
      const url = `http://127.0.0.1:${(hostile.address() as AddressInfo).port}`;
      class Thing extends Entity {
        id?: string;
        name = "";
        static override configure(c: EntityConfiguration) {
          c.setUrl(url).setName("config");
        }
      }
      Thing.useClient(new EntityClient());
      const err = await Thing.find("1").then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).to.be.instanceOf(EntityResponseError);
      expect((err as Error).message).to.include("DTD");
    } finally {
      hostile.close();
    }
  });
});
