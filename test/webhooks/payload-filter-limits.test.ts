import { randomUUID } from "node:crypto";
import { createRequire } from "node:module";
import { expect } from "chai";
import { applyFilters } from "../../core/config-filters.js";
import { EVENT_STEPS, FILTER_STEPS, FilterBudgetExceeded, StepMeter } from "../../core/filter-budget.js";
import { compileFilter } from "../../core/filter-compile.js";
import {
  largestRepeat,
  MAX_LIST_VALUES,
  MAX_REGEX_CHARS,
  MAX_REGEX_PROGRAM,
  MAX_REGEX_REPEAT,
  MAX_REGEXES,
} from "../../core/filter-limits.js";
import { checkFilter, FilterSyntaxError } from "../../core/filter-syntax.js";
import type { Config } from "../../generated/prisma/client.js";
import { manyRegexFilter, oneHugeRegexFilter } from "../support/worst-filters.js";

/** sift with its own operators: the reference the hashed ones must agree with. */
const siftOwn = (
  createRequire(import.meta.url)("sift") as { default: (q: unknown) => (doc: unknown) => boolean }
).default;

/** The message of the FilterSyntaxError `filter` gets at write time. */
function refusal(filter: unknown): string {
  try {
    checkFilter(filter);
  } catch (err) {
    expect(err).to.be.instanceOf(FilterSyntaxError);
    return (err as Error).message;
  }
  throw new Error(`accepted ${JSON.stringify(filter)}`);
}

const configOf = (filter: unknown): Config =>
  ({ id: randomUUID(), filter, updatedAt: new Date(0), tenantId: randomUUID() }) as unknown as Config;

const message = (payload: unknown) => ({
  idempotency_key: "k",
  date: "2026-11-28T09:00:00Z",
  app: "a",
  version: "v1",
  type: "a.b",
  payload,
});

describe("payload filters: write-time limits (core/filter-limits.ts)", () => {
  it("refuses patterns too long, counting too far or compiling too large, too many $regex and long lists, naming the path", () => {
    expect(refusal({ "payload.a": { $regex: "a".repeat(MAX_REGEX_CHARS + 1) } })).to.equal(
      `filter["payload.a"].$regex is ${MAX_REGEX_CHARS + 1} characters long; a pattern may have at most ${MAX_REGEX_CHARS}`,
    );
    expect(refusal({ $or: [{ "payload.a": { $regex: "[ab]*a[ab]{999}$" } }] })).to.equal(
      `filter.$or[0]["payload.a"].$regex repeats 999 times ({999}); a counted repetition may count at most ${MAX_REGEX_REPEAT}`,
    );
    expect(refusal({ "payload.a": { $regex: "x{5,101}" } })).to.contain("repeats 101 times");
    expect(refusal({ "payload.a": { $regex: "[ab]{100}".repeat(11) } })).to.match(
      new RegExp(
        `^filter\\["payload.a"\\].\\$regex compiles to \\d+ RE2 instructions; a pattern may compile to at most ${MAX_REGEX_PROGRAM}`,
      ),
    );
    const regexes = Array.from({ length: MAX_REGEXES + 1 }, (_, i) => ({
      [`payload.f${i}`]: { $regex: "x" },
    }));
    expect(refusal({ $and: regexes })).to.equal(
      `filter.$and[${MAX_REGEXES}]["payload.f${MAX_REGEXES}"].$regex is one $regex too many: a filter may have at most ${MAX_REGEXES}`,
    );
    for (const op of ["$in", "$nin", "$all"]) {
      const values = Array.from({ length: MAX_LIST_VALUES + 1 }, (_, i) => i);
      expect(refusal({ "payload.n": { [op]: values } })).to.equal(
        `filter["payload.n"].${op} has ${MAX_LIST_VALUES + 1} values; a list may have at most ${MAX_LIST_VALUES}`,
      );
    }
    expect(refusal(manyRegexFilter())).to.contain("repeats 999 times");
    expect(refusal(oneHugeRegexFilter())).to.contain("characters long");
  });

  it("accepts what is within the limits", () => {
    const within = {
      $and: Array.from({ length: MAX_REGEXES }, (_, i) => ({
        [`payload.f${i}`]: { $regex: "^[a-z]{2,100}@x\\.com$" },
      })),
      "payload.n": { $in: Array.from({ length: MAX_LIST_VALUES }, (_, i) => i) },
    };
    expect(() => checkFilter(within)).not.to.throw();
  });

  it("reads counted repetitions as RE2 does: not escaped, not in a class, not quoted", () => {
    expect(largestRepeat("a{3}b{2,7}c{9,}")).to.equal(9);
    expect(largestRepeat("\\{500\\}[{500}]\\Q{500}\\E{x}")).to.equal(0);
    expect(largestRepeat("[]{500}]x{4}")).to.equal(4);
  });
});

describe("payload filters: the step budget (core/filter-budget.ts)", () => {
  it("charges a regex its program size times the text's length before it runs, the same every time", () => {
    const test = compileFilter({ "payload.t": { $regex: "^a+$" } });
    const spent = () => {
      const meter = new StepMeter();
      test(message({ t: "a".repeat(1000) }), meter);
      return meter.spent;
    };
    const first = spent();
    expect(first).to.be.greaterThan(1000);
    expect(spent()).to.equal(first);
    // Over the budget: stopped before matching, whatever the engine would have done.
    expect(() => test(message({ t: "a".repeat(FILTER_STEPS) }))).to.throw(FilterBudgetExceeded);
  });

  it("runs stored filters past the limits without compiling their patterns, over budget when they reach a string", () => {
    const huge = compileFilter(oneHugeRegexFilter(), true);
    expect(() => huge(message({ text: "ab" }))).to.throw(FilterBudgetExceeded);
    expect(huge(message({ other: 1 }))).to.equal(false);
    expect(() => compileFilter(oneHugeRegexFilter())).to.throw(FilterSyntaxError);
  });

  it("counts a filter over budget as not passed, with the reason, and shares the event's budget among its configs", () => {
    const text = "ab".repeat(20_000);
    const costly = configOf({ "payload.t": { $regex: "(a|b)+c" } });
    const cheap = configOf({ "payload.n": 1 });
    const open = configOf(null);
    const r = applyFilters([costly, cheap, open], message({ t: text, n: 1 }) as never);
    expect(r.passed.map((c) => c.id)).to.deep.equal([cheap.id, open.id]);
    expect(r.filteredOut).to.equal(1);
    expect(r.overBudget.map((o) => o.config.id)).to.deep.equal([costly.id]);
    expect(r.overBudget[0]!.reason).to.equal(
      `the filter needs more than ${FILTER_STEPS} steps for this event (its budget)`,
    );

    // Filters that each take most of their own budget: the event's runs out after a few.
    const many = Array.from({ length: 6 }, () => configOf({ "payload.list": { $all: [-1] } }));
    const list = Array.from({ length: Math.floor(FILTER_STEPS / 4) }, (_, i) => i);
    const shared = applyFilters([...many, open], message({ list }) as never);
    expect(shared.passed).to.deep.equal([open]);
    const ranOut = shared.overBudget.filter((o) => o.reason.includes("spent by its other configs"));
    expect(ranOut.length).to.be.greaterThan(0);
    expect(6 - ranOut.length).to.be.at.most(Math.ceil(EVENT_STEPS / (FILTER_STEPS * 0.6)));
  });
});

describe("payload filters: $in, $nin and $all by hashing (core/filter-lists.ts)", () => {
  it("match as sift's own operators do (and so does equality), on values, arrays, nested arrays, objects, nulls and missing fields", () => {
    const values = [1, "1", 2, null, true, [1, 2], { a: 1 }, { a: [1] }, [[1]], "x"];
    const fields = [
      undefined,
      1,
      "1",
      null,
      [1, 2],
      [[1, 2]],
      [1, [2, "x"]],
      [{ a: 1 }, { a: 2 }],
      { a: 1 },
      [null],
      [],
      [true, "x", 2],
      [[[1]]],
    ];
    let rnd = 7;
    const pick = () => {
      rnd = (rnd * 1103515245 + 12345) & 0x7fffffff;
      return rnd;
    };
    let compared = 0;
    for (let i = 0; i < 3000; i++) {
      // Lists, and the equality our comparison gives literals, $eq and $ne.
      const op = ["$in", "$nin", "$all", "$eq", "$ne", ""][pick() % 6]!;
      const list = Array.from({ length: 1 + (pick() % 4) }, () => values[pick() % values.length]);
      const field = fields[pick() % fields.length];
      const path = pick() % 2 ? "payload.f" : "payload.f.a";
      const value = list[0];
      const isOperatorFree = typeof value !== "object" || value === null || Array.isArray(value);
      const condition =
        op === ""
          ? isOperatorFree
            ? value
            : { $eq: value }
          : { [op]: op.startsWith("$e") || op === "$ne" ? value : list };
      const filter = { [path]: condition };
      const doc = message(field === undefined ? {} : { f: field });
      expect(
        compileFilter(filter)(doc),
        `${JSON.stringify(filter)} on ${JSON.stringify(doc.payload)}`,
      ).to.equal(siftOwn(filter)(doc));
      compared++;
    }
    expect(compared).to.equal(3000);
  });

  it("costs one lookup per element, whatever the list's length", () => {
    const list = Array.from({ length: 10_000 }, (_, i) => i);
    const spent = (n: number) => {
      const meter = new StepMeter();
      const values = Array.from({ length: n }, (_, i) => -1 - i);
      compileFilter({ "payload.list": { $in: values } })(message({ list }), meter);
      return meter.spent;
    };
    expect(spent(256)).to.equal(spent(1));
  });
});
