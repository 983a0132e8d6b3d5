import { get } from "node:http";
import { expect } from "chai";
import pg from "pg";
import { renderList } from "../../api/config-list.js";
import { startWebhooks, type WebhooksUnderTest } from "../support/webhooks-server.js";

interface Listed {
  id: string;
  name: string;
  endpoint: string;
  previousSecretExpiresAt?: string;
}

/**
 * The full list is served from a per-instance cache checked against
 * config_list_version and refreshed from config_list_changes: every write,
 * from any instance or straight SQL, must show on the next list of every
 * instance, exactly as a fresh rendering by PostgreSQL shows it.
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

  /** The list as PostgreSQL renders it from scratch, without any cache. */
  const rendered = async (): Promise<Listed[]> => {
    const pool = new pg.Pool({ connectionString: a.db.url, max: 1 });
    try {
      return JSON.parse((await renderList(pool)).body).cursor.data;
    } finally {
      await pool.end();
    }
  };
  /** webhooks_config_list_refreshes_total of an instance, by kind. */
  const refreshes = async (api: WebhooksUnderTest) => {
    const text = (await api.call("GET", "/metrics")).text;
    const count = (kind: string) =>
      Number(
        new RegExp(`^webhooks_config_list_refreshes_total\\{kind="${kind}"\\} (\\d+)`, "m").exec(text)?.[1] ??
          0,
      );
    return { changes: count("changes"), full: count("full") };
  };
  const version = async () =>
    Number((await sql.query("SELECT version FROM config_list_version")).rows[0].version);

  it("keeps an incrementally refreshed list equal to a fresh rendering across mixed writes", async () => {
    const ids = [] as string[];
    for (let i = 0; i < 6; i++) ids.push((await create(i % 2 ? a : b, `mixed-${i}`)).id);
    await list(a); // warm: from here on a only applies changes
    const before = await refreshes(a);
    const steps: [string, () => Promise<unknown>][] = [
      [
        "update through b",
        () => b.call("PUT", `/configs/${ids[2]}`, { endpoint: "https://cache.test/u", eventTypes: ["x.y"] }),
      ],
      ["delete through b", () => b.call("DELETE", `/configs/${ids[4]}`)],
      ["create through b", async () => ids.push((await create(b, "mixed-new")).id)],
      // Moves a row down the list: updated_at into the past.
      [
        "SQL backdate",
        () => sql.query("UPDATE configs SET updated_at = now() - interval '1 day' WHERE id = $1", [ids[5]]),
      ],
      ["SQL bulk rename", () => sql.query("UPDATE configs SET name = name || '!' WHERE name LIKE 'mixed-%'")],
      [
        "SQL insert and delete in one transaction",
        () =>
          sql.query(`BEGIN; INSERT INTO configs (id, endpoint, event_types, secret) VALUES (gen_random_uuid(), 'https://cache.test/tx', '{a.b}', 's');
          DELETE FROM configs WHERE id = '${ids[0]}'; COMMIT`),
      ],
      [
        "secret overlap through b",
        () => b.call("PUT", `/configs/${ids[1]}/secret/change`, { overlap: "1h" }),
      ],
    ];
    for (const [what, step] of steps) {
      const done = (await step()) as { status?: number; text?: string };
      if (done?.status !== undefined) expect(done.status, `${what}: ${done.text}`).to.equal(200);
      expect(await list(a), what).to.deep.equal(await rendered());
    }
    const after = await refreshes(a);
    expect(after.full, "full loads").to.equal(before.full);
    expect(after.changes - before.changes, "refreshes from changes").to.equal(steps.length);
  });

  it("does not change the version for a write that touches no config", async () => {
    await list(a);
    const before = await version();
    const r = await b.call("PUT", "/configs/00000000-0000-4000-8000-000000000000", {
      endpoint: "https://cache.test/none",
      eventTypes: ["a.b"],
    });
    expect(r.status).to.equal(404);
    await sql.query("DELETE FROM configs WHERE id = '00000000-0000-4000-8000-000000000000'");
    expect(await version()).to.equal(before);
  });

  it("loads the whole list again when it fell behind the kept changes", async () => {
    const kept = await create(a, "behind");
    await list(a);
    // 1 001 single-row statements: the oldest versions a's cache needs are pruned.
    await sql.query(`DO $$ BEGIN FOR i IN 1..1001 LOOP
      UPDATE configs SET name = 'behind-' || i WHERE id = '${kept.id}'; END LOOP; END $$`);
    expect(
      Number((await sql.query("SELECT count(DISTINCT version) AS n FROM config_list_changes")).rows[0].n),
    ).to.equal(1000);
    const before = await refreshes(a);
    const now = await list(a);
    expect((await refreshes(a)).full).to.equal(before.full + 1);
    expect(now.find((c) => c.id === kept.id)?.name).to.equal("behind-1001");
    expect(now).to.deep.equal(await rendered());
  });

  it("sees writes made directly in the database, even ones that keep updated_at", async () => {
    const c = await create(a, "direct");
    await list(a);
    await list(b);
    await sql.query("UPDATE configs SET name = 'renamed in SQL' WHERE id = $1", [c.id]);
    for (const api of [a, b]) {
      expect((await list(api)).find((x) => x.id === c.id)?.name).to.equal("renamed in SQL");
    }
    // CASCADE: the configs' endpoint auth rows (config_auth) reference them.
    await sql.query("TRUNCATE configs CASCADE");
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
    for (const t of ["insert", "update", "delete", "truncate"])
      await sql.query(`DROP TRIGGER configs_log_${t} ON configs`);
    await sql.query("DROP TABLE config_list_version");
    const c = await create(b, "no-version");
    // Without the trigger nothing would invalidate the cache: only a fallback sees the new row.
    expect((await list(a)).map((x) => x.id)).to.include(c.id);
    await sql.query("UPDATE configs SET name = 'still seen' WHERE id = $1", [c.id]);
    expect((await list(a)).find((x) => x.id === c.id)?.name).to.equal("still seen");
    await a.process.waitForOutput("config list version unreadable");
  });
});
