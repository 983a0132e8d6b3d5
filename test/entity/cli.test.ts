import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import pg from "pg";
import { createTestDatabase, type TestDatabase } from "../support/postgres.js";
import { type Running, runToExit, start, stop } from "./command.js";
import { attemptData } from "./support.js";

describe("entity-server command", () => {
  let db: TestDatabase;
  let configId: string;

  before(async () => {
    db = await createTestDatabase();
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const { rows } = await client.query(
        `INSERT INTO configs (id, endpoint, event_types, secret, previous_secret)
         VALUES (gen_random_uuid(), 'http://cli.test', '{a.b}', 'cfg-secret-value', 'old-secret-value') RETURNING id`,
      );
      configId = rows[0].id;
      const a = attemptData(configId, 1);
      await client.query(
        `INSERT INTO attempts (id, webhook_id, config_id, config, payload, status_code, retry_attempt, status)
         VALUES (gen_random_uuid(), $1, $2, $3, $4, $5, $6, 'failed')`,
        [
          a.webhookId,
          configId,
          JSON.stringify({ ...a.config, secret: "snapshot-secret-value" }),
          a.payload,
          500,
          1,
        ],
      );
    } finally {
      await client.end();
    }
  });
  after(() => db?.drop());

  it("--help lists the flags and exits 0", async () => {
    const { code, out } = await runToExit(["--help"]);
    expect(code).to.equal(0);
    for (const flag of [
      "--listen",
      "--storage-sqldb-conn-string",
      "--auto-migrate",
      "--writable",
      "--username",
      "--secrets-key-file",
      "--insecure-plaintext-secrets",
    ]) {
      expect(out).to.include(flag);
    }
  });

  it("rejects bad flags with a message naming the flag and exit 1", async () => {
    const bad = await runToExit(["--listen", "nope"]);
    expect(bad.code).to.equal(1);
    expect(bad.out).to.include("--listen");
    const badPool = await runToExit(["--storage-sqldb-pool-max", "0"]);
    expect(badPool.code).to.equal(1);
    expect(badPool.out).to.include("--storage-sqldb-pool-max");
    const unknownAlias = await runToExit([
      "--storage-sqldb-conn-string",
      db.url,
      "--listen",
      "127.0.0.1:0",
      "--writable",
      "users",
    ]);
    expect(unknownAlias.code).to.equal(1);
    expect(unknownAlias.out).to.include('unknown alias "users"');
    const halfAuth = await runToExit(["--storage-sqldb-conn-string", db.url, "--username", "u"]);
    expect(halfAuth.code).to.equal(1);
    expect(halfAuth.out).to.include("--password");
    // A writable config alias seals the secrets it writes: it needs the webhooks service's key ring.
    const writable = [
      "--storage-sqldb-conn-string",
      db.url,
      "--listen",
      "127.0.0.1:0",
      "--writable",
      "config",
    ];
    const noKey = await runToExit(writable, { SECRETS_KEY_FILE: "" });
    expect(noKey.code).to.equal(1);
    expect(noKey.out)
      .to.include("--writable config stores signing secrets")
      .and.include("--secrets-key-file");
    const missingKey = await runToExit([...writable, "--secrets-key-file", "/nonexistent/keys"]);
    expect(missingKey.code).to.equal(1);
    expect(missingKey.out).to.include("/nonexistent/keys");
  });

  describe("serving the product tables by default", () => {
    let r: Running;
    before(async () => {
      r = await start(["--storage-sqldb-conn-string", db.url]);
    });
    after(async () => {
      const code = await stop(r);
      expect(code).to.equal(0);
    });

    it("answers /_healthcheck and /_info", async () => {
      const health = await fetch(`${r.baseUrl}/_healthcheck`);
      expect(health.status).to.equal(200);
      expect(await health.json()).to.deep.equal({ status: "ok", checks: { database: "ok" } });
      const info = (await (await fetch(`${r.baseUrl}/_info`)).json()) as {
        aliases: Record<string, { readOnly: boolean; fields: string[] }>;
      };
      expect(info.aliases.config?.readOnly).to.equal(true);
      expect(info.aliases.config?.fields).to.include("previousSecretExpiresAt").and.not.include("secret");
    });

    it("never renders secrets, in either format, top-level or nested", async () => {
      for (const path of [
        `/config/${configId}.xml`,
        `/config/${configId}.json`,
        "/config.xml",
        "/config.json",
        "/attempt.xml",
        "/attempt.json",
      ]) {
        const res = await fetch(`${r.baseUrl}${path}`);
        const body = await res.text();
        expect(res.status, path).to.equal(200);
        expect(body, path).not.to.match(
          /secret-value|<previousSecret[ >]|"previousSecret"|<secret[ >]|"secret"/,
        );
      }
      const [attempt] = (await (await fetch(`${r.baseUrl}/attempt.json`)).json()) as { config: unknown }[];
      expect(attempt?.config).to.deep.equal({
        endpoint: "http://example.test/hook",
        eventTypes: ["ledger.committed"],
      });
    });

    it("is read-only unless told otherwise", async () => {
      const put = await fetch(`${r.baseUrl}/config.json`, {
        method: "PUT",
        body: new URLSearchParams({ endpoint: "http://x", secret: "s" }),
      });
      expect(put.status).to.equal(405);
      const del = await fetch(`${r.baseUrl}/config/${configId}.xml`, { method: "DELETE" });
      expect(del.status).to.equal(405);
    });
  });

  it("without a connection string (DATABASE_URL empty) serves the embedded database", async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), "entity-server-"));
    const r = await start(["--data-dir", dataDir, "--auto-migrate"]);
    try {
      expect(r.output()).to.include('"database":"embedded"');
      const res = await fetch(`${r.baseUrl}/config.json`);
      expect(res.status).to.equal(200);
      expect(await res.json()).to.deep.equal([]);
    } finally {
      expect(await stop(r)).to.equal(0);
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("accepts writes on --writable aliases and requires --username/--password when set", async () => {
    const r = await start([
      "--storage-sqldb-conn-string",
      db.url,
      "--writable",
      "config",
      "--username",
      "ops",
      "--password",
      "pw",
    ]);
    try {
      const auth = { authorization: `Basic ${Buffer.from("ops:pw").toString("base64")}` };
      const secret = "bmV3LXNlY3JldC12YWx1ZS0yNC1ieXRl"; // base64 of 24 bytes, as the API requires
      const body = new URLSearchParams({
        endpoint: "http://written.test",
        "eventTypes[]": "ledger.committed",
        secret,
      });
      expect((await fetch(`${r.baseUrl}/config.json`, { method: "PUT", body })).status).to.equal(401);
      const put = await fetch(`${r.baseUrl}/config.json`, { method: "PUT", body, headers: auth });
      const text = await put.text();
      expect(put.status, text).to.equal(201);
      expect(text).not.to.include(secret);
      const attempt = await fetch(`${r.baseUrl}/attempt.json`, { method: "PUT", body, headers: auth });
      expect(attempt.status).to.equal(405);
    } finally {
      expect(await stop(r)).to.equal(0);
    }
  });
});
