import { randomUUID } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { fromRoot } from "../../common/paths.js";
import { applyFilters } from "../../core/config-filters.js";
import { findActiveConfigs } from "../../core/config-rows.js";
import type { EventMessage } from "../../core/event-message.js";
import { subscriptionsMatching } from "../../core/event-types.js";
import { compileFilter } from "../../core/filter-compile.js";
import { createTestDatabase } from "../../test/support/postgres.js";

// bench/delivery/filter-matching: what payload filters add to matching one event, with
// 1 000 active configs subscribed to its type, of which half carry a filter, against the
// same 1 000 configs without filters, in the same run on the same database (PostgreSQL
// from setup). Two measures per event: the whole matching step of startEventDeliveries
// (the indexed query for the type's configs, then the filters), and the filters alone on
// rows already read. Rounds alternate the two sets so drift hits both; medians of rounds.
// The one-time cost, compiling a filter for a config version, is measured on its own.
// Usage: node dist/bench/delivery/filter-matching.js [rounds] [events-per-round]

const ROUNDS = Number(process.argv[2] ?? 5);
const EVENTS = Number(process.argv[3] ?? 200);
const CONFIGS = 1_000;

/** The filters of the filtered set, in turn: the operators users reach for. */
const filterFor = (i: number): unknown => {
  switch (i % 5) {
    case 0:
      return { "payload.amount": { $gte: (i % 50) * 10 } };
    case 1:
      return { "payload.currency": { $in: ["USD", "GBP", `X${i % 7}`] } };
    case 2:
      return { "payload.customer.tier": "gold", "payload.items.sku": `sku-${i % 20}` };
    case 3:
      return { "payload.customer.email": { $regex: `@example${i % 10}\\.com$`, $options: "i" } };
    default:
      return {
        $or: [{ "payload.amount": { $lt: i % 100 } }, { "payload.tags": { $in: ["vip", `t${i % 9}`] } }],
        "payload.refunded": { $exists: false },
      };
  }
};

const eventOf = (type: string, i: number): EventMessage => ({
  idempotency_key: `bench-${i}`,
  date: "2026-11-27T09:00:00Z",
  app: "bench",
  version: "v1",
  type,
  payload: {
    amount: (i * 37) % 600,
    currency: ["EUR", "USD", "GBP"][i % 3],
    customer: { email: `User${i}@Example${i % 10}.com`, tier: i % 4 === 0 ? "gold" : "silver" },
    items: Array.from({ length: 1 + (i % 4) }, (_, k) => ({
      sku: `sku-${(i + k) % 20}`,
      qty: 1 + k,
      price: 10 * k,
    })),
    tags: i % 6 === 0 ? ["vip"] : ["t1", "t2"],
  },
});

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

async function seed(pool: pg.Pool, type: string, filtered: boolean): Promise<void> {
  const ids = Array.from({ length: CONFIGS }, () => randomUUID());
  const filters = ids.map((_, i) => (filtered && i % 2 === 0 ? JSON.stringify(filterFor(i)) : null));
  await pool.query(
    `INSERT INTO configs (id, endpoint, event_types, secret, filter)
       SELECT id, 'http://127.0.0.1:9/hook', ARRAY[$1], 'c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0', f::jsonb
       FROM unnest($2::uuid[], $3::text[]) AS t(id, f)`,
    [type, ids, filters],
  );
}

let sink = 0; // keeps results alive

/** Mean µs per event of `events` runs of `match`. */
async function timed(
  events: EventMessage[],
  match: (e: EventMessage) => Promise<number> | number,
): Promise<number> {
  const start = process.hrtime.bigint();
  for (const e of events) sink += await match(e);
  return Number(process.hrtime.bigint() - start) / 1e3 / events.length;
}

async function main(): Promise<void> {
  const db = await createTestDatabase();
  const pool = new pg.Pool({ connectionString: db.url, max: 2 });
  try {
    const sets = [
      { name: "without filters", type: "bench.plain", filtered: false },
      { name: "half with filters", type: "bench.filtered", filtered: true },
    ];
    for (const s of sets) await seed(pool, s.type, s.filtered);
    await pool.query("ANALYZE configs");
    const rowsOf = new Map<string, Awaited<ReturnType<typeof findActiveConfigs>>>();
    for (const s of sets) rowsOf.set(s.type, await findActiveConfigs(pool, subscriptionsMatching(s.type)));

    // One-time cost: compiling each filter of a new config version (first event after a write or a start).
    const filters = Array.from({ length: CONFIGS / 2 }, (_, k) => filterFor(2 * k));
    const compileStart = process.hrtime.bigint();
    for (const f of filters) sink += compileFilter(f)({}) ? 1 : 0;
    const compileUsPerFilter = Number(process.hrtime.bigint() - compileStart) / 1e3 / filters.length;

    const full = new Map<string, number[]>(sets.map((s) => [s.name, []]));
    const only = new Map<string, number[]>(sets.map((s) => [s.name, []]));
    const read = new Map<string, number[]>(sets.map((s) => [s.name, []]));
    const passedPerEvent = new Map<string, number>();
    // Warm-up round (compiles the filters, plans the statement), then measured rounds.
    for (let round = 0; round <= ROUNDS; round++) {
      for (const s of sets) {
        const events = Array.from({ length: EVENTS }, (_, i) => eventOf(s.type, round * EVENTS + i));
        const rows = rowsOf.get(s.type)!;
        let passed = 0;
        const fullUs = await timed(events, async (e) => {
          const found = await findActiveConfigs(pool, subscriptionsMatching(e.type));
          const n = applyFilters(found, e).passed.length;
          passed += n;
          return n;
        });
        const onlyUs = await timed(events, (e) => applyFilters(rows, e).passed.length);
        const readUs = await timed(
          events,
          async (e) => (await findActiveConfigs(pool, subscriptionsMatching(e.type))).length,
        );
        if (round === 0) continue;
        read.get(s.name)!.push(readUs);
        full.get(s.name)!.push(fullUs);
        only.get(s.name)!.push(onlyUs);
        passedPerEvent.set(s.name, passed / EVENTS);
      }
    }

    const rows = sets.map((s) => ({
      set: s.name,
      configs: CONFIGS,
      withFilter: s.filtered ? CONFIGS / 2 : 0,
      passedPerEvent: Number(passedPerEvent.get(s.name)!.toFixed(1)),
      matchingUsPerEvent: Number(median(full.get(s.name)!).toFixed(1)),
      matchingRoundsUs: full.get(s.name)!.map((x) => Number(x.toFixed(1))),
      readOnlyUsPerEvent: Number(median(read.get(s.name)!).toFixed(1)),
      filtersOnlyUsPerEvent: Number(median(only.get(s.name)!).toFixed(1)),
      filtersOnlyRoundsUs: only.get(s.name)!.map((x) => Number(x.toFixed(1))),
    }));
    const [plain, filtered] = rows as [(typeof rows)[0], (typeof rows)[0]];
    const pad = (v: string | number, n: number) => String(v).padStart(n);
    // The machine is shared: its load says how far these figures may be from a quiet one.
    const load = os.loadavg().map((l) => Number(l.toFixed(2)));
    console.log(
      `filter matching: ${CONFIGS} active configs per event type, ${ROUNDS} rounds x ${EVENTS} events, median of rounds, ` +
        `us per event (load average ${load.join(" ")} on ${os.availableParallelism()} cores)`,
    );
    console.log(
      `${"configs".padEnd(20)}${pad("with filter", 12)}${pad("passed/event", 14)}${pad("matching", 10)}${pad("query only", 12)}${pad("filters only", 14)}`,
    );
    for (const r of rows) {
      console.log(
        `${r.set.padEnd(20)}${pad(r.withFilter, 12)}${pad(r.passedPerEvent, 14)}${pad(r.matchingUsPerEvent, 10)}${pad(r.readOnlyUsPerEvent, 12)}${pad(r.filtersOnlyUsPerEvent, 14)}`,
      );
    }
    const added = filtered.matchingUsPerEvent - plain.matchingUsPerEvent;
    console.log(
      `filters add ${added.toFixed(1)} us per event to matching (${((added / plain.matchingUsPerEvent) * 100).toFixed(0)} %), ` +
        `${(filtered.filtersOnlyUsPerEvent / (CONFIGS / 2)).toFixed(2)} us per filter evaluated; ` +
        `compiling a filter (once per config version): ${compileUsPerFilter.toFixed(1)} us`,
    );

    const out = fromRoot("bench", "results", "filter-matching.json");
    mkdirSync(path.dirname(out), { recursive: true });
    writeFileSync(
      out,
      `${JSON.stringify({ at: new Date().toISOString(), loadAverage: load, rounds: ROUNDS, eventsPerRound: EVENTS, compileUsPerFilter, rows, sink }, null, 2)}\n`,
    );
    console.log(`results written to ${out}`);
  } finally {
    await pool.end();
    await db.drop();
  }
}

await main();
