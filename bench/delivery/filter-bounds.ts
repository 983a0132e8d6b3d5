import { randomUUID } from "node:crypto";
import { createRequire } from "node:module";
import os from "node:os";
import { RE2JS } from "re2js";
import type * as Sift from "sift";
import { applyFilters } from "../../core/config-filters.js";
import type { EventMessage } from "../../core/event-message.js";
import { FILTER_STEPS, StepMeter } from "../../core/filter-budget.js";
import { compileFilter } from "../../core/filter-compile.js";
import { regexFlags } from "../../core/filter-syntax.js";
import type { Config } from "../../generated/prisma/client.js";
import {
  abText,
  bigListFilter,
  largestListEvent,
  largestTextEvent,
  manyRegexFilter,
  oneHugeRegexFilter,
  typicalEvent,
  typicalFilter,
} from "../../test/support/worst-filters.js";
import { writeResults } from "../support/results.js";

// bench/delivery/filter-bounds: what one config's payload filter can cost per event,
// for the worst filters the checker accepts, against the largest events, next to a
// typical filter on a typical event measured in the same run (the baseline of the
// ratio). Filters run synchronously on the event loop of the API and the consumer,
// so this is also how long every other event in the process waits.
// Without the budget, a regex filter over a 2 MiB text that costs hours is not run whole: RE2's NFA does
// at most (program instructions x text characters) steps, so those rows are the
// step count times ns per step measured here on one saturated pattern (64 KiB of
// text under [ab]*a[ab]{999}$), marked "estimated".
// The rows "budgeted" and below run as matching does now (core/config-filters.ts):
// stored filters past the write-time limits under the step budget, and the worst
// filters the limits accept, alone and on three configs of one event. Before the
// bounds, the $in/$nin/$all row measured 66 s per event (commit 9ac6af6).
// Usage: node dist/bench/delivery/filter-bounds.js [rounds, default 5]

const ROUNDS = Number(process.argv[2] ?? 5);

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

const configOf = (filter: unknown): Config =>
  ({ id: randomUUID(), filter, updatedAt: new Date(0) }) as unknown as Config;

let sink = 0;

/** Median µs of `rounds` timings of fn (after one warm-up run unless told not to). */
function timed(fn: () => number, rounds: number, warmUp = true): { us: number; roundsUs: number[] } {
  if (warmUp) sink += fn();
  const roundsUs: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const start = process.hrtime.bigint();
    sink += fn();
    roundsUs.push(Number(process.hrtime.bigint() - start) / 1e3);
  }
  return { us: median(roundsUs), roundsUs: roundsUs.map((u) => Number(u.toFixed(1))) };
}

/**
 * µs per event of applying `filter`, on `count` configs, to `event`. Compiled
 * first, on an empty event; then one warm-up run.
 */
function perEvent(filter: unknown, event: EventMessage, rounds: number, count = 1) {
  const configs = Array.from({ length: count }, () => configOf(filter));
  applyFilters(configs, { ...event, payload: {} });
  return timed(() => {
    const r = applyFilters(configs, event);
    return r.passed.length + r.filteredOut + r.broken.length;
  }, rounds);
}

const sift = createRequire(import.meta.url)("sift") as typeof Sift;

/** A filter on sift's own operators and an unmetered RE2 $regex: matching as it was before the bounds. */
function siftUnmetered(filter: unknown): (doc: unknown) => boolean {
  const names = [
    "$eq",
    "$ne",
    "$gt",
    "$gte",
    "$lt",
    "$lte",
    "$in",
    "$nin",
    "$all",
    "$size",
    "$exists",
  ] as const;
  const more = ["$options", "$not", "$elemMatch", "$and", "$or", "$nor"] as const;
  const operations: Record<string, unknown> = Object.fromEntries(
    [...names, ...more].map((n) => [n, sift[n]]),
  );
  operations.$regex = (pattern: string, owner: { $options?: string }, options: never) => {
    const re = RE2JS.compile(pattern, regexFlags(owner.$options ?? ""));
    return sift.createEqualsOperation((v: unknown) => typeof v === "string" && re.test(v), owner, options);
  };
  return sift.createQueryTester(filter as Sift.Query<unknown>, { operations } as never);
}

/** Instructions of a pattern's RE2 program. */
const programSize = (pattern: string): number =>
  (
    RE2JS.compile(pattern) as unknown as { re2Input: { prog: { numInst(): number } } }
  ).re2Input.prog.numInst();

function main(): void {
  const rows: Record<string, unknown>[] = [];
  const add = (scenario: string, filter: unknown, us: number, how: string, extra = {}) =>
    rows.push({
      scenario,
      filterBytes: Buffer.byteLength(JSON.stringify(filter)),
      usPerEvent: Number(us.toFixed(us < 10 ? 2 : 1)),
      how,
      ...extra,
    });

  // The baseline: a typical filter on a typical event, timed over 2 000 events per round.
  const typical = [configOf(typicalFilter())];
  const small = typicalEvent("typical");
  const baseline = timed(() => {
    let n = 0;
    for (let i = 0; i < 2000; i++) n += applyFilters(typical, small).passed.length;
    return n;
  }, ROUNDS);
  const baselineUs = baseline.us / 2000;
  add("typical filter, typical event (baseline)", typicalFilter(), baselineUs, "measured");
  // What metering adds: the compiled predicate alone, against the same filter on sift's
  // own operators with nothing counted (matching before the bounds).
  const loop = (test: () => boolean) => () => {
    let n = 0;
    for (let i = 0; i < 2000; i++) n += test() ? 1 : 0;
    return n;
  };
  const ours = compileFilter(typicalFilter(), true);
  const theirs = siftUnmetered(typicalFilter());
  const oursUs =
    timed(
      loop(() => ours(small, new StepMeter())),
      ROUNDS,
    ).us / 2000;
  const theirsUs =
    timed(
      loop(() => theirs(small)),
      ROUNDS,
    ).us / 2000;
  add("  the predicate alone, metered", typicalFilter(), oursUs, "measured");
  add(
    "  the same on sift's own operators, unmetered (before the bounds)",
    typicalFilter(),
    theirsUs,
    "measured",
  );

  // ns per NFA step, one saturated pattern over 64 KiB of a's and b's.
  const probe = "[ab]*a[ab]{999}$";
  const probeText = 64 * 1024;
  const step = timed(() => (RE2JS.compile(probe).test(`${abText(probeText)}c`) ? 1 : 0), 3);
  const nsPerStep = (step.us * 1e3) / (programSize(probe) * probeText);

  const textEvent = largestTextEvent("largest-text");
  const listEvent = largestListEvent("largest-list");
  const textLength = (textEvent.payload as { text: string }).text.length;
  const many = manyRegexFilter();
  const manyPatterns = (many as { $or: unknown[] }).$or.length;
  const manySteps = manyPatterns * programSize(probe) * textLength;
  const huge = oneHugeRegexFilter();
  const hugePattern = (huge as { "payload.text": { $regex: string } })["payload.text"].$regex;
  const hugeSteps = programSize(hugePattern) * textLength;
  // Without the budget (what the checker let through before the limits): estimated.
  add(
    `${manyPatterns} x [ab]*a[ab]{999}$ (16 KiB), 2 MiB text, unbounded`,
    many,
    (manySteps * nsPerStep) / 1e3,
    "estimated",
    {
      steps: manySteps,
    },
  );
  add(
    "one regex of RE2's largest program (1.4 M instructions), 2 MiB text, unbounded",
    huge,
    (hugeSteps * nsPerStep) / 1e3,
    "estimated",
    {
      steps: hugeSteps,
    },
  );
  // The same filters as stored rows now: they run under the budget.
  const measured = (scenario: string, filter: unknown, event: EventMessage, configs = 1) => {
    const r = perEvent(filter, event, ROUNDS, configs);
    add(scenario, filter, r.us, "measured", { roundsUs: r.roundsUs, configs });
  };
  measured(`${manyPatterns} x [ab]*a[ab]{999}$ stored, 2 MiB text, budgeted`, many, textEvent);
  measured("one regex of 1.4 M instructions stored, 2 MiB text, budgeted", huge, textEvent);
  measured(
    "$in, $nin, $all of 1 000 / 1 000 / 600 values stored, array of 10^5, budgeted",
    bigListFilter(),
    listEvent,
  );

  // The worst the limits accept: a pattern on the longest text its budget allows, and the
  // longest lists on the largest array.
  // About sqrt(FILTER_STEPS) instructions on as many characters: RE2's NFA runs every
  // instruction on every character once the text is longer than the program.
  const limitPattern = `[ab]*a${"[ab]{75}".repeat(2)}$`;
  const limitSize = programSize(limitPattern);
  const fits = abText(Math.floor(FILTER_STEPS / limitSize) - 2);
  const limitRegex = { "payload.text": { $regex: limitPattern } };
  const fitsEvent = { ...textEvent, payload: { text: fits } };
  measured(
    `one regex of ${limitSize} instructions on ${fits.length} characters (its budget)`,
    limitRegex,
    fitsEvent,
  );
  measured(`the same on 3 configs of the event (the event's budget)`, limitRegex, fitsEvent, 3);
  const lists = (n: number) => Array.from({ length: n }, (_, i) => -1 - i);
  const limitLists = {
    $or: [
      { "payload.list": { $in: lists(256) } },
      { "payload.list": { $nin: lists(256) } },
      { "payload.list": { $all: lists(256) } },
    ],
  };
  measured("$in, $nin, $all of 256 values each, array of 10^5", limitLists, listEvent);
  measured("the same on 3 configs of the event (the event's budget)", limitLists, listEvent, 3);

  for (const r of rows) r.timesBaseline = Number(((r.usPerEvent as number) / baselineUs).toPrecision(2));
  const load = os.loadavg().map((l) => Number(l.toFixed(2)));
  console.log(
    `payload filter cost per event, one config (load average ${load.join(" ")} on ${os.availableParallelism()} cores; ` +
      `median of ${ROUNDS} rounds; RE2 NFA: ${nsPerStep.toFixed(1)} ns per step)`,
  );
  const pad = (v: unknown, n: number) => String(v).padStart(n);
  console.log(
    `${"scenario".padEnd(72)}${pad("bytes", 7)}${pad("us/event", 16)}${pad("x baseline", 14)}  how`,
  );
  for (const r of rows) {
    console.log(
      `${String(r.scenario).padEnd(72)}${pad(r.filterBytes, 7)}${pad(r.usPerEvent, 16)}${pad(r.timesBaseline, 14)}  ${r.how}`,
    );
  }
  writeResults("filter-bounds", { loadAverage: load, rounds: ROUNDS, nsPerStep, rows, sink });
}

main();
