import { expect } from "chai";
import { applyFilters } from "../../core/config-filters.js";
import type { EventMessage } from "../../core/event-message.js";
import { StepMeter } from "../../core/filter-budget.js";
import { compileFilter } from "../../core/filter-compile.js";
import { checkFilter, FilterSyntaxError, MAX_FILTER_BYTES } from "../../core/filter-syntax.js";
import type { Config } from "../../generated/prisma/client.js";

const event: EventMessage = {
  idempotency_key: "order-42",
  date: "2026-11-27T09:00:00Z",
  app: "shop",
  version: "v1",
  type: "shop.order_paid",
  payload: {
    amount: 120,
    currency: "EUR",
    customer: { email: "Bob@Example.com", tier: "gold", since: "2024-03-01" },
    items: [
      { sku: "a-1", qty: 2, price: 50 },
      { sku: "b-7", qty: 1, price: 20 },
    ],
    tags: ["vip", "first-order"],
    coupon: null,
  },
};

const matches = (filter: unknown) => compileFilter(filter)(event);

/** The message of the FilterSyntaxError `filter` gets. */
function refusal(filter: unknown): string {
  try {
    checkFilter(filter);
  } catch (err) {
    expect(err).to.be.instanceOf(FilterSyntaxError);
    return (err as Error).message;
  }
  throw new Error(`accepted ${JSON.stringify(filter)}`);
}

describe("payload filters: the language (core/filter-syntax.ts, core/filter-compile.ts)", () => {
  it("matches equality on envelope fields and nested dotted paths", () => {
    expect(matches({ type: "shop.order_paid" })).to.equal(true);
    expect(matches({ type: "shop.order_refunded" })).to.equal(false);
    expect(matches({ "payload.customer.tier": "gold" })).to.equal(true);
    expect(matches({ "payload.customer.tier": "silver" })).to.equal(false);
    expect(
      matches({ "payload.customer": { email: "Bob@Example.com", tier: "gold", since: "2024-03-01" } }),
    ).to.equal(true);
    expect(matches({ idempotency_key: "order-42", "payload.currency": "EUR" })).to.equal(true);
    expect(matches({ idempotency_key: "order-42", "payload.currency": "USD" })).to.equal(false);
    expect(matches({})).to.equal(true);
  });

  it("compares numbers with numbers and strings with strings, never across types", () => {
    expect(matches({ "payload.amount": { $gt: 100 } })).to.equal(true);
    expect(matches({ "payload.amount": { $gte: 120, $lte: 120 } })).to.equal(true);
    expect(matches({ "payload.amount": { $lt: 120 } })).to.equal(false);
    expect(matches({ "payload.amount": { $gt: "100" } })).to.equal(false);
    expect(matches({ "payload.customer.since": { $gte: "2024-01-01" } })).to.equal(true);
    expect(matches({ "payload.customer.since": { $lt: "2024-01-01" } })).to.equal(false);
    expect(matches({ "payload.amount": { $ne: 120 } })).to.equal(false);
    expect(matches({ "payload.amount": { $eq: 120 } })).to.equal(true);
    expect(matches({ "payload.missing": { $gt: 0 } })).to.equal(false);
  });

  it("matches an array field when any element matches, and offers $elemMatch, $all and $size", () => {
    expect(matches({ "payload.tags": "vip" })).to.equal(true);
    expect(matches({ "payload.tags": "new" })).to.equal(false);
    expect(matches({ "payload.items.sku": "b-7" })).to.equal(true);
    expect(matches({ "payload.items.qty": { $gt: 1 } })).to.equal(true);
    expect(matches({ "payload.items.qty": { $gt: 2 } })).to.equal(false);
    // Any element with a sku b-7 and any with qty 2, not necessarily the same one...
    expect(matches({ "payload.items.sku": "b-7", "payload.items.qty": 2 })).to.equal(true);
    // ...whereas $elemMatch wants one element that has both.
    expect(matches({ "payload.items": { $elemMatch: { sku: "b-7", qty: 2 } } })).to.equal(false);
    expect(matches({ "payload.items": { $elemMatch: { sku: "a-1", qty: { $gte: 2 } } } })).to.equal(true);
    expect(matches({ "payload.tags": { $elemMatch: { $regex: "^first-" } } })).to.equal(true);
    expect(matches({ "payload.tags": { $elemMatch: { $regex: "^last-" } } })).to.equal(false);
    expect(matches({ "payload.tags": { $all: ["first-order", "vip"] } })).to.equal(true);
    expect(matches({ "payload.tags": { $all: ["vip", "new"] } })).to.equal(false);
    expect(matches({ "payload.tags": { $size: 2 } })).to.equal(true);
    expect(matches({ "payload.items.0.sku": "a-1" })).to.equal(true);
  });

  it("offers $in, $nin and $exists", () => {
    expect(matches({ "payload.currency": { $in: ["USD", "EUR"] } })).to.equal(true);
    expect(matches({ "payload.currency": { $in: ["USD"] } })).to.equal(false);
    expect(matches({ "payload.currency": { $nin: ["USD"] } })).to.equal(true);
    expect(matches({ "payload.tags": { $in: ["new", "vip"] } })).to.equal(true);
    expect(matches({ "payload.tags": { $nin: ["vip"] } })).to.equal(false);
    expect(matches({ "payload.coupon": { $exists: true } })).to.equal(true);
    expect(matches({ "payload.refund": { $exists: true } })).to.equal(false);
    expect(matches({ "payload.refund": { $exists: false } })).to.equal(true);
  });

  it("combines with $and, $or, $nor and $not", () => {
    const eur = { "payload.currency": "EUR" };
    const usd = { "payload.currency": "USD" };
    expect(matches({ $or: [usd, { "payload.amount": { $gt: 100 } }] })).to.equal(true);
    expect(matches({ $or: [usd, { "payload.amount": { $gt: 500 } }] })).to.equal(false);
    expect(matches({ $and: [eur, { "payload.customer.tier": "gold" }] })).to.equal(true);
    expect(matches({ $and: [eur, usd] })).to.equal(false);
    expect(matches({ $nor: [usd, { "payload.amount": { $lt: 10 } }] })).to.equal(true);
    expect(matches({ $nor: [eur] })).to.equal(false);
    expect(matches({ $not: eur })).to.equal(false);
    expect(matches({ $not: usd })).to.equal(true);
    expect(matches({ "payload.amount": { $not: { $gt: 500 } } })).to.equal(true);
    expect(matches({ "payload.amount": { $not: { $gt: 100 } } })).to.equal(false);
  });

  it("runs $regex on RE2: partial matches, flags i, m, s, strings only", () => {
    expect(matches({ "payload.customer.email": { $regex: "@example\\.com$" } })).to.equal(false);
    expect(matches({ "payload.customer.email": { $regex: "@example\\.com$", $options: "i" } })).to.equal(
      true,
    );
    expect(matches({ "payload.customer.email": { $regex: "(?i)^bob@" } })).to.equal(true);
    expect(matches({ "payload.tags": { $regex: "^first-" } })).to.equal(true);
    expect(matches({ "payload.amount": { $regex: "120" } })).to.equal(false);
    // Exponential for a backtracking engine on this text; linear here. (Given a budget
    // above the default: 5 000 characters times these programs is more than FILTER_STEPS.)
    const evil = { ...event, payload: { text: `${"a".repeat(5_000)}!` } };
    const room = () => new StepMeter(1_000_000);
    expect(compileFilter({ "payload.text": { $regex: "^(a+)+$" } })(evil, room())).to.equal(false);
    expect(compileFilter({ "payload.text": { $regex: "^(a|aa)*!$" } })(evil, room())).to.equal(true);
  });

  it("does not let a path reach what every object inherits", () => {
    expect(matches({ "payload.nothing.length": { $exists: true } })).to.equal(false);
    expect(refusal({ "payload.constructor": { $exists: true } })).to.equal(
      'filter["payload.constructor"] names "constructor", which every JSON object inherits; it cannot be filtered on',
    );
    expect(refusal({ "payload.__proto__.x": 1 })).to.match(
      /^filter\["payload.__proto__.x"\] names "__proto__"/,
    );
  });

  it("refuses bad filters, naming the path of the bad operator", () => {
    expect(refusal([])).to.equal("filter must be a JSON object (a filter document), got []");
    expect(refusal("payload.amount > 3")).to.match(/^filter must be a JSON object/);
    expect(refusal({ "payload.amount": { $gt: true } })).to.equal(
      'filter["payload.amount"].$gt must be a number or a string, got true',
    );
    expect(refusal({ $or: [{ type: "a.b" }, { "payload.x": { $in: 3 } }] })).to.equal(
      'filter.$or[1]["payload.x"].$in must be an array of values, got 3',
    );
    expect(refusal({ $and: { type: "a.b" } })).to.equal(
      'filter.$and must be a non-empty array of filter documents, got {"type":"a.b"}',
    );
    expect(refusal({ $or: [] })).to.match(/^filter\.\$or must be a non-empty array/);
    expect(refusal({ $nor: [3] })).to.equal(
      "filter.$nor[0] must be a JSON object (a filter document), got 3",
    );
    expect(refusal({ "payload.a": { $foo: 1 } })).to.match(
      /^filter\["payload.a"\]\.\$foo is not a supported operator; a condition takes \$eq, /,
    );
    expect(refusal({ $where: "this.amount > 3" })).to.match(/^filter\.\$where is not a supported operator/);
    expect(refusal({ $gt: 3 })).to.match(/^filter\.\$gt applies to a field/);
    expect(refusal({ "payload.a": { $gt: 3, b: 1 } })).to.equal(
      'filter["payload.a"] mixes operators with the field "b": a condition holds only operators, a literal object none',
    );
    expect(refusal({ "payload..a": 1 })).to.match(/^filter\["payload..a"\] has an empty segment/);
    expect(refusal({ "": 1 })).to.equal('filter[""] is an empty field path');
    expect(refusal({ "payload.a": { $exists: 1 } })).to.equal(
      'filter["payload.a"].$exists must be true or false, got 1',
    );
    expect(refusal({ "payload.a": { $size: -1 } })).to.match(/\$size must be a non-negative integer/);
    expect(refusal({ "payload.a": { $in: [1, { $gt: 1 }] } })).to.equal(
      'filter["payload.a"].$in[1] must be a value: operators cannot be nested in a list of values',
    );
    expect(refusal({ "payload.a": { $all: [{ $elemMatch: { b: 1 } }] } })).to.match(
      /\$all\[0\] must be a value/,
    );
    expect(refusal({ "payload.a": { $all: [] } })).to.match(/\$all must be a non-empty array/);
    expect(refusal({ "payload.a": { $not: 3 } })).to.match(
      /^filter\["payload.a"\]\.\$not must be a condition/,
    );
    expect(refusal({ "payload.a": { $not: { $bad: 3 } } })).to.match(
      /^filter\["payload.a"\]\.\$not\.\$bad is not a supported operator/,
    );
    expect(refusal({ "payload.a": { $elemMatch: { "x.y": { $lt: [] } } } })).to.equal(
      'filter["payload.a"].$elemMatch["x.y"].$lt must be a number or a string, got []',
    );
  });

  it("refuses regular expressions RE2 cannot run in linear time, and unknown flags", () => {
    expect(refusal({ "payload.s": { $regex: "(a)\\1" } })).to.match(
      /^filter\["payload.s"\]\.\$regex is not an RE2 regular expression \(no lookaround, no backreferences\): .*\\1/,
    );
    expect(refusal({ "payload.s": { $regex: "(?=a)b" } })).to.match(
      /\$regex is not an RE2 regular expression/,
    );
    expect(refusal({ "payload.s": { $regex: "[a-" } })).to.match(/\$regex is not an RE2 regular expression/);
    expect(refusal({ "payload.s": { $regex: 3 } })).to.match(/\$regex must be a string/);
    expect(refusal({ "payload.s": { $regex: "a", $options: "x" } })).to.equal(
      'filter["payload.s"].$options unknown flag "x": the flags are i (case-insensitive), m (multi-line), s (dot matches newline)',
    );
    expect(refusal({ "payload.s": { $options: "i" } })).to.equal(
      'filter["payload.s"].$options applies only beside $regex',
    );
  });

  it("bounds a filter's size and depth", () => {
    const big = { "payload.id": { $in: Array.from({ length: 3_000 }, (_, i) => `order-${i}`) } };
    expect(refusal(big)).to.match(
      new RegExp(`^filter must be at most ${MAX_FILTER_BYTES} bytes as JSON, got \\d+$`),
    );
    let deep: Record<string, unknown> = { type: "a.b" };
    for (let i = 0; i < 40; i++) deep = { $and: [deep] };
    expect(refusal(deep)).to.match(/^filter(\.\$and\[0\])+ nests deeper than 32 levels$/);
    expect(() => checkFilter(null)).not.to.throw();
  });
});

describe("payload filters applied to configs (core/config-filters.ts)", () => {
  let n = 0;
  const config = (filter: unknown, updatedAt = new Date("2026-11-27T09:00:00Z")): Config =>
    ({ id: `00000000-0000-4000-8000-${String(++n).padStart(12, "0")}`, filter, updatedAt }) as Config;

  it("passes configs without a filter and those whose filter matches; counts the others", () => {
    const open = config(null);
    const eur = config({ "payload.currency": "EUR" });
    const usd = config({ "payload.currency": "USD" });
    const { passed, filteredOut, broken } = applyFilters([open, eur, usd], event);
    expect(passed).to.deep.equal([open, eur]);
    expect(filteredOut).to.equal(1);
    expect(broken).to.deep.equal([]);
  });

  it("reports a filter that cannot run for its config and still applies the others", () => {
    const bad = config({ "payload.currency": { $where: "1" } });
    const eur = config({ "payload.currency": "EUR" });
    const { passed, broken } = applyFilters([bad, eur], event);
    expect(passed).to.deep.equal([eur]);
    expect(broken).to.have.length(1);
    expect(broken[0]!.config).to.equal(bad);
    expect(broken[0]!.failure.source).to.equal("config");
    expect(broken[0]!.failure.message).to.match(
      new RegExp(
        `^config ${bad.id} cannot be used: its filter fails: filter\\["payload.currency"\\]\\.\\$where is not a supported operator`,
      ),
    );
  });

  it("compiles a config's filter once per version: the same updatedAt reuses it, a new one recompiles", () => {
    const first = config({ "payload.currency": "EUR" });
    expect(applyFilters([first], event).passed).to.have.length(1);
    // Same id and updatedAt: the compiled predicate is reused, whatever the row object holds.
    const sameVersion = { ...first, filter: { "payload.currency": "USD" } } as Config;
    expect(applyFilters([sameVersion], event).passed).to.have.length(1);
    const nextVersion = { ...sameVersion, updatedAt: new Date(first.updatedAt.getTime() + 1) } as Config;
    expect(applyFilters([nextVersion], event).filteredOut).to.equal(1);
  });
});

describe("payload filters: what the checker accepts always runs", () => {
  it("compiles and runs every generated filter the checker accepts, on events of every shape", () => {
    let seed = 42; // deterministic: a failure reproduces
    const rnd = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    const pick = <T>(a: T[]): T => a[Math.floor(rnd() * a.length)]!;
    const values = [1, "x", null, true, [1, "x"], { a: 1 }, { $gt: 1 }, [], {}, -3.5, "2024-01-01"];
    const paths = ["payload.a", "payload.b.c", "type", "payload.items.sku", "payload.a.0", "x"];
    const ops = ["$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$all", "$size", "$exists"];
    const more = ["$regex", "$options", "$not", "$elemMatch", "$and", "$or", "$nor", "$foo"];
    const condition = (d: number): unknown => {
      if (d > 3 || rnd() < 0.3) return pick(values);
      const c: Record<string, unknown> = {};
      for (let i = 0; i < 1 + Math.floor(rnd() * 2); i++) {
        const op = pick([...ops, ...more]);
        if (op === "$not" || op === "$elemMatch") c[op] = rnd() < 0.5 ? condition(d + 1) : document(d + 1);
        else if (/^\$(and|or|nor)$/.test(op)) c[op] = [document(d + 1)];
        else if (op === "$regex") c[op] = pick(["a.*", "(?i)x", "(", "^b$"]);
        else if (op === "$options") c[op] = pick(["i", "im", "z"]);
        else if (/^\$(in|nin|all)$/.test(op)) c[op] = [pick(values), pick(values)];
        else c[op] = pick(values);
      }
      return c;
    };
    const document = (d: number): Record<string, unknown> => {
      const doc: Record<string, unknown> = {};
      for (let i = 0; i < 1 + Math.floor(rnd() * 3); i++) {
        const r = rnd();
        if (r < 0.15 && d < 4) doc[pick(["$and", "$or", "$nor"])] = [document(d + 1), document(d + 1)];
        else if (r < 0.2 && d < 4) doc.$not = document(d + 1);
        else doc[pick(paths)] = condition(d + 1);
      }
      return doc;
    };
    const events = [
      { type: "a.b", payload: { a: [1, "x", { a: 1 }], b: { c: "2024-05-01" }, items: [{ sku: "x" }] } },
      { type: "a.c", payload: null },
      { type: "a.d", payload: { a: "abc", b: [] } },
    ];
    let accepted = 0;
    for (let i = 0; i < 20_000; i++) {
      const filter = document(0);
      try {
        checkFilter(filter);
      } catch {
        continue;
      }
      accepted++;
      const test = compileFilter(filter);
      for (const e of events) expect(test(e), JSON.stringify(filter)).to.be.a("boolean");
    }
    expect(accepted).to.be.greaterThan(1_000);
  });
});
