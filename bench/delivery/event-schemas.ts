import { mkdirSync, writeFileSync } from "node:fs";
import pg from "pg";
import { createLogger } from "../../common/logger.js";
import { fromRoot } from "../../common/paths.js";
import { EventCatalog } from "../../core/event-catalog.js";
import { parseEventMessage } from "../../core/event-message.js";
import { checkEventSchema } from "../../core/event-schema-check.js";
import { compileEventSchema } from "../../core/event-schemas.js";
import { createTestDatabase } from "../../test/support/postgres.js";

// bench/delivery/event-schemas: what the event catalog adds to the start path of one event,
// in this process, on a real PostgreSQL: the lookup in the process's copy of the catalog
// and the payload's check (checkEventSchema, as startEventDeliveries calls it), for an
// empty catalog (the feature off), a type listed without a schema, a typical schema and a
// large one; plus what compiling a schema costs (once per version and process) and what the
// copy's freshness check costs (one query per second and process at most).
// Usage: node dist/bench/delivery/event-schemas.js [events=200000]

const EVENTS = Number(process.argv[2] ?? 200_000);

const TYPICAL = {
  type: "object",
  required: ["id", "amount", "currency", "paidAt"],
  properties: {
    id: { type: "string", pattern: "^ord_[0-9]+$" },
    amount: { type: "number", minimum: 0 },
    currency: { enum: ["EUR", "USD", "GBP"] },
    paidAt: { type: "string", format: "date-time" },
    customer: { type: "object", properties: { email: { type: "string", format: "email" } } },
    lines: {
      type: "array",
      maxItems: 100,
      items: {
        type: "object",
        required: ["sku"],
        properties: { sku: { type: "string" }, qty: { type: "integer" } },
      },
    },
  },
};
const TYPICAL_PAYLOAD = {
  id: "ord_42",
  amount: 99.5,
  currency: "EUR",
  paidAt: "2026-11-27T09:00:00Z",
  customer: { email: "a@example.com" },
  lines: Array.from({ length: 5 }, (_, i) => ({ sku: `sku-${i}`, qty: i + 1 })),
};
/** 200 typed properties, the payload carrying all of them. */
const LARGE = {
  type: "object",
  properties: Object.fromEntries(
    Array.from({ length: 200 }, (_, i) => [`f${i}`, { type: i % 2 ? "string" : "integer", maxLength: 64 }]),
  ),
};
const LARGE_PAYLOAD = Object.fromEntries(
  Array.from({ length: 200 }, (_, i) => [`f${i}`, i % 2 ? `v${i}` : i]),
);

interface Row {
  scenario: string;
  nsPerEvent: number;
}

async function main(): Promise<void> {
  const db = await createTestDatabase();
  const pool = new pg.Pool({ connectionString: db.url, max: 2 });
  const catalog = new EventCatalog(pool, createLogger("bench", "warn"));
  const put = (name: string, schema: unknown) =>
    pool.query("INSERT INTO event_types (id, name, schema) VALUES (gen_random_uuid(), $1, $2::json)", [
      name,
      schema === null ? null : JSON.stringify(schema),
    ]);
  const event = (type: string, payload: unknown) =>
    parseEventMessage(Buffer.from(JSON.stringify({ idempotency_key: "k", app: "bench", type, payload })));
  const rows: Row[] = [];
  const run = async (scenario: string, e: ReturnType<typeof event>) => {
    for (let i = 0; i < 10_000; i++) await checkEventSchema(catalog, e, false); // warm-up
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < EVENTS; i++) await checkEventSchema(catalog, e, false);
    const ns = Number(process.hrtime.bigint() - t0) / EVENTS;
    rows.push({ scenario, nsPerEvent: Math.round(ns) });
    process.stderr.write(`${scenario}: ${Math.round(ns)} ns per event\n`);
  };
  try {
    await run("empty catalog (feature off)", event("plain", TYPICAL_PAYLOAD));
    await put("bench.listed", null);
    await put("bench.typical", TYPICAL);
    await put("bench.large", LARGE);
    catalog.invalidate();
    await run("type in the catalog, no schema", event("listed", TYPICAL_PAYLOAD));
    await run(
      "typical schema (6 properties, formats, a pattern), passing",
      event("typical", TYPICAL_PAYLOAD),
    );
    await run(
      "typical schema, failing (counted, delivered)",
      event("typical", { ...TYPICAL_PAYLOAD, amount: "99.5" }),
    );
    await run("200-property schema, passing", event("large", LARGE_PAYLOAD));

    const compileMs = (schema: unknown) => {
      const t0 = performance.now();
      for (let i = 0; i < 50; i++) compileEventSchema(schema);
      return (performance.now() - t0) / 50;
    };
    const probe = async () => {
      const t0 = performance.now();
      for (let i = 0; i < 200; i++)
        await pool.query(
          "SELECT md5(string_agg(name || ':' || version, ',' ORDER BY name)) AS digest FROM event_types",
        );
      return (performance.now() - t0) / 200;
    };
    const once = {
      compileTypicalMs: Number(compileMs(TYPICAL).toFixed(2)),
      compileLargeMs: Number(compileMs(LARGE).toFixed(2)),
      freshnessCheckMs: Number((await probe()).toFixed(3)),
    };
    console.log(`\nWhat the event catalog adds to one event's start (${EVENTS} events per scenario)\n`);
    console.log("| scenario | ns per event |");
    console.log("|---|---:|");
    for (const r of rows) console.log(`| ${r.scenario} | ${r.nsPerEvent} |`);
    console.log(
      `\ncompile, once per version and process: typical ${once.compileTypicalMs} ms, 200 properties ${once.compileLargeMs} ms; freshness check (at most once per second and process): ${once.freshnessCheckMs} ms with 3 types`,
    );
    mkdirSync(fromRoot("bench", "results"), { recursive: true });
    const file = fromRoot("bench", "results", "event-schemas.json");
    writeFileSync(
      file,
      `${JSON.stringify({ date: new Date().toISOString(), events: EVENTS, rows, once }, null, 2)}\n`,
    );
    console.log(`results written to ${file}`);
  } finally {
    await pool.end();
    await db.drop();
  }
}

main().catch((err: Error) => {
  console.error(err.stack ?? err.message);
  process.exit(1);
});
