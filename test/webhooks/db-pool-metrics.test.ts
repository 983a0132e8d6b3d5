import { expect } from "chai";
import pg from "pg";
import { startWebhooks, type WebhooksUnderTest } from "../support/webhooks-server.js";

const gauge = (text: string, name: string) => Number(new RegExp(`^${name} (\\d+)`, "m").exec(text)?.[1]);

/**
 * The database pool's gauges: with every connection held by a query that waits on a
 * lock, /metrics still answers (its one database read, the blocked ordering keys, gives up
 * after a second) and shows the pool busy and the queries queued behind it, and both go
 * back once the lock is released.
 */
describe("database pool metrics", function () {
  this.timeout(60_000);
  let api: WebhooksUnderTest;

  before(async () => {
    api = await startWebhooks({ args: ["--storage-sqldb-pool-size", "2", "--audit-topic", ""] });
  });
  after(async () => {
    await api?.stop();
  });

  const metrics = async () => (await api.call("GET", "/metrics")).text;
  const busy = (text: string) => gauge(text, 'webhooks_db_pool_connections\\{state="busy"\\}');
  /** The gauges once nothing holds a connection (background ticks may, for a moment). */
  const quiet = async () => {
    let text = await metrics();
    for (let i = 0; i < 100 && (busy(text) > 0 || gauge(text, "webhooks_db_pool_waiting") > 0); i++) {
      await new Promise((r) => setTimeout(r, 50));
      text = await metrics();
    }
    return text;
  };

  it("shows busy connections and queries waiting for one", async () => {
    const idle = await quiet();
    expect(busy(idle)).to.equal(0);
    expect(gauge(idle, "webhooks_db_pool_waiting")).to.equal(0);
    expect(gauge(idle, 'webhooks_db_pool_connections\\{state="idle"\\}')).to.be.at.most(2);

    const locker = new pg.Client({ connectionString: api.db.url });
    await locker.connect();
    try {
      await locker.query("BEGIN");
      await locker.query("LOCK TABLE configs IN ACCESS EXCLUSIVE MODE");
      const creates = Array.from({ length: 4 }, (_, i) =>
        api.call("POST", "/configs", { endpoint: `https://pool.test/${i}`, eventTypes: ["a.b"] }),
      );
      let text = await metrics();
      for (let i = 0; i < 100 && gauge(text, "webhooks_db_pool_waiting") === 0; i++) {
        await new Promise((r) => setTimeout(r, 50));
        text = await metrics();
      }
      expect(busy(text)).to.equal(2);
      expect(gauge(text, "webhooks_db_pool_waiting")).to.be.greaterThan(0);

      await locker.query("COMMIT");
      for (const created of await Promise.all(creates)) expect(created.status, created.text).to.equal(200);
      text = await quiet();
      expect(gauge(text, "webhooks_db_pool_waiting")).to.equal(0);
      expect(busy(text)).to.equal(0);
    } finally {
      await locker.end();
    }
  });
});
