import { get } from "node:http";
import { expect } from "chai";
import pg from "pg";
import { startWebhooks, type WebhooksUnderTest } from "../support/webhooks-server.js";

interface Listed {
  id: string;
  name: string;
  endpoint: string;
  previousSecretExpiresAt?: string;
}

/**
 * The full list is served from a per-instance cache checked against
 * config_list_version: every write, from any instance or straight SQL, must
 * show on the next list of every instance.
 */
describe("full config list cache (two API instances on one PostgreSQL)", function () {
  this.timeout(120_000);
  let a: WebhooksUnderTest;
  let b: WebhooksUnderTest;
  let sql: pg.Client;

  before(async () => {
    a = await startWebhooks({ args: ["--audit-topic", ""] });
    b = await startWebhooks({ db: a.db, args: ["--audit-topic", ""] });
    sql = new pg.Client({ connectionString: a.db.url });
    await sql.connect();
  });
  after(async () => {
    await sql?.end();
    await b?.stop();
    await a?.stop();
  });

  const list = async (api: WebhooksUnderTest): Promise<Listed[]> => {
    const r = await api.call("GET", "/configs");
    expect(r.status, r.text).to.equal(200);
    expect(r.body.cursor.hasMore).to.equal(false);
    return r.body.cursor.data;
  };
  const create = async (api: WebhooksUnderTest, name: string): Promise<Listed> => {
    const r = await api.call("POST", "/configs", {
      endpoint: `https://cache.test/${name}`,
      eventTypes: ["a.b"],
      name,
    });
    expect(r.status, r.text).to.equal(200);
    return r.body.data;
  };

  it("sees creates, updates and deletes made through the other instance", async () => {
    const first = await create(a, "first");
    expect((await list(b)).map((c) => c.id)).to.include(first.id);
    expect((await list(a)).map((c) => c.id)).to.include(first.id); // a's cache is warm now

    const second = await create(b, "second");
    expect((await list(a)).map((c) => c.id)).to.deep.equal([second.id, first.id]);

    const r = await b.call("PUT", `/configs/${first.id}`, {
      endpoint: "https://cache.test/moved",
      eventTypes: ["a.b"],
    });
    expect(r.status).to.equal(200);
    const afterUpdate = await list(a);
    expect(afterUpdate[0]).to.include({ id: first.id, endpoint: "https://cache.test/moved", name: "first" });

    expect((await b.call("DELETE", `/configs/${second.id}`)).status).to.equal(200);
    expect((await list(a)).map((c) => c.id)).to.deep.equal([first.id]);
  });

  it("sees writes made directly in the database, even ones that keep updated_at", async () => {
    const c = await create(a, "direct");
    await list(a);
    await list(b);
    await sql.query("UPDATE configs SET name = 'renamed in SQL' WHERE id = $1", [c.id]);
    for (const api of [a, b]) {
      expect((await list(api)).find((x) => x.id === c.id)?.name).to.equal("renamed in SQL");
    }
    await sql.query("TRUNCATE configs");
    expect(await list(a)).to.deep.equal([]);
    expect(await list(b)).to.deep.equal([]);
  });

  it("drops previousSecretExpiresAt once the overlap ends, without a write", async () => {
    const c = await create(a, "overlap");
    await sql.query(
      "UPDATE configs SET previous_secret = 'old', previous_secret_expires_at = now() + interval '1500 milliseconds' WHERE id = $1",
      [c.id],
    );
    const during = (await list(a)).find((x) => x.id === c.id)!;
    expect(during.previousSecretExpiresAt).to.be.a("string");
    await new Promise((r) => setTimeout(r, 1_700));
    const after = (await list(a)).find((x) => x.id === c.id)!;
    expect(after).to.not.have.property("previousSecretExpiresAt");
  });

  // node:http, not fetch: fetch adds Cache-Control: no-cache to conditional requests.
  const conditionalGet = (url: string, etag?: string) =>
    new Promise<{ status: number; etag: string; type: string }>((resolve, reject) => {
      get(url, { headers: etag ? { "if-none-match": etag } : {} }, (res) => {
        res.resume().on("end", () =>
          resolve({
            status: res.statusCode!,
            etag: String(res.headers.etag),
            type: String(res.headers["content-type"]),
          }),
        );
      }).on("error", reject);
    });

  it("answers 304 to a matching If-None-Match and changes the ETag on a write", async () => {
    const first = await conditionalGet(`${a.url}/configs`);
    expect(first.etag).to.match(/^W\/"/);
    expect(first.type).to.equal("application/json; charset=utf-8");
    expect((await conditionalGet(`${a.url}/configs`, first.etag)).status).to.equal(304);
    await create(b, "etag");
    const changed = await conditionalGet(`${a.url}/configs`, first.etag);
    expect(changed.status).to.equal(200);
    expect(changed.etag).to.not.equal(first.etag);
  });

  it("falls back to the database on every request when the version cannot be read", async () => {
    await list(a); // cached
    await sql.query("DROP TRIGGER configs_bump_list_version ON configs");
    await sql.query("DROP TABLE config_list_version");
    const c = await create(b, "no-version");
    // Without the trigger nothing would invalidate the cache: only a fallback sees the new row.
    expect((await list(a)).map((x) => x.id)).to.include(c.id);
    await sql.query("UPDATE configs SET name = 'still seen' WHERE id = $1", [c.id]);
    expect((await list(a)).find((x) => x.id === c.id)?.name).to.equal("still seen");
    await a.process.waitForOutput("config list version unreadable");
  });
});
