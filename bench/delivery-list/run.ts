import { randomUUID } from "node:crypto";
import { listDeliveries, readDeliveryListQuery } from "../../api/delivery-list.js";
import { openDatabase } from "../../common/db/database.js";
import { createTestDatabase } from "../../test/support/postgres.js";

// bench/delivery-list: GET /configs/{id}/deliveries's query (api/delivery-list.ts) on a
// fresh database holding one config with many deliveries (one or three attempt rows each,
// a few unsent) beside other configs' rows: the time of a page, first and deep, and with
// each filter, median of repeated runs after a warm-up.
// Usage: node dist/bench/delivery-list/run.js [deliveries of the config, default 100000]

const DELIVERIES = Number(process.argv[2] ?? 100_000);
const RUNS = 25;

async function main() {
  const testDb = await createTestDatabase();
  const db = await openDatabase({ connString: testDb.url, embeddedDataDir: "", autoMigrate: false });
  try {
    const config = randomUUID();
    const other = randomUUID();
    // Rows in bulk with generate_series: 1 in 10 deliveries retried (3 rows), 1 in 50 failed,
    // types alternating between four, the rare type 1 in 1000; as many rows for another config.
    await db.pool.query(
      `INSERT INTO events (id, type, idempotency_key, body, bytes)
       SELECT 'bench:' || t, t, '', '{}', 2 FROM unnest(ARRAY['a.one','a.two','a.three','a.four','a.rare']) t`,
    );
    for (const [configId, n] of [
      [config, DELIVERIES],
      [other, DELIVERIES],
    ] as const) {
      await db.pool.query(
        `INSERT INTO attempts (id, webhook_id, config_id, config, event_id, status_code, retry_attempt, status, created_at, updated_at)
         SELECT gen_random_uuid(), w.id, $1::uuid, '{}',
                'bench:' || CASE WHEN w.i % 1000 = 0 THEN 'a.rare' ELSE (ARRAY['a.one','a.two','a.three','a.four'])[w.i % 4 + 1] END,
                CASE WHEN r.n < w.last THEN 500 WHEN w.i % 50 = 0 THEN 500 ELSE 200 END, r.n,
                (CASE WHEN r.n < w.last THEN 'to retry' WHEN w.i % 50 = 0 THEN 'failed' ELSE 'success' END)::attempt_status,
                now() - make_interval(secs => $2 - w.i + r.n), now()
           FROM (SELECT i, gen_random_uuid() AS id, CASE WHEN i % 10 = 0 THEN 2 ELSE 0 END AS last
                   FROM generate_series(1, $2) i) w
           CROSS JOIN LATERAL generate_series(0, w.last) r(n)`,
        [configId, n],
      );
    }
    await db.pool.query(
      `INSERT INTO unsent_deliveries (webhook_id, config_id, workflow_id, event_id, state, reason, accepted_at, next_try_at)
       SELECT gen_random_uuid(), $1::uuid, 'bench', 'bench:a.one', 'waiting', 'bench', now() - make_interval(secs => i * 7), now()
         FROM generate_series(1, 500) i`,
      [config],
    );
    await db.pool.query("ANALYZE");
    const rows = (await db.pool.query("SELECT count(*)::int AS n FROM attempts")).rows[0].n;
    console.log(`${DELIVERIES} deliveries of the config (${rows} attempt rows in all, 500 unsent)\n`);

    const time = async (label: string, query: Record<string, string>) => {
      const q = readDeliveryListQuery(query);
      let items = 0;
      const ms: number[] = [];
      for (let i = 0; i < RUNS + 3; i++) {
        const t = process.hrtime.bigint();
        const page = await listDeliveries(db.prisma, config, q);
        if (i >= 3) ms.push(Number(process.hrtime.bigint() - t) / 1e6);
        items = page.cursor.data.length;
      }
      ms.sort((a, b) => a - b);
      console.log(
        `${label.padEnd(44)} ${String(items).padStart(4)} items  median ${ms[RUNS >> 1]!.toFixed(1)} ms  max ${ms.at(-1)!.toFixed(1)} ms`,
      );
    };
    await time("first page (50)", {});
    const deep = (await listDeliveries(db.prisma, config, readDeliveryListQuery({ pageSize: "1000" }))).cursor
      .next!;
    let cursor = deep;
    for (let i = 0; i < 40; i++)
      cursor = (await listDeliveries(db.prisma, config, readDeliveryListQuery({ pageSize: "1000", cursor })))
        .cursor.next!;
    await time("page 50 after 41 000 deliveries (cursor)", { cursor });
    await time("status=failed (1 in 50)", { status: "failed" });
    await time("eventType=a.rare (1 in 1000)", { eventType: "a.rare" });
    await time("status=failed&eventType=a.rare (1 in 1000)", { status: "failed", eventType: "a.rare" });
    await time("status=waiting (500 unsent)", { status: "waiting" });
    await time("eventType=a.none (no match: every row read)", { eventType: "a.none" });
    await time("pageSize=1000", { pageSize: "1000" });
  } finally {
    await db.close();
    await testDb.drop();
  }
}

await main();
