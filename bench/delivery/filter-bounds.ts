import { randomUUID } from "node:crypto";
import os from "node:os";
import { RE2JS } from "re2js";
import { applyFilters } from "../../core/config-filters.js";
import type { EventMessage } from "../../core/event-message.js";
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
// A regex filter over a 2 MiB text that costs hours is not run whole: RE2's NFA does
// at most (program instructions x text characters) steps, so those rows are the
// step count times ns per step measured here on one saturated pattern (64 KiB of
// text under [ab]*a[ab]{999}$), marked "estimated".
// Usage: node dist/bench/delivery/filter-bounds.js [rounds, default 5] [rounds of the list row, default 1]

const ROUNDS = Number(process.argv[2] ?? 5);
/** Rounds of the costliest measured row (about a minute each before the bounds). */
const LIST_ROUNDS = Number(process.argv[3] ?? 1);

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
 * µs per event of applying `filter` to `event`. Compiled first, on an empty event;
 * no warm-up run beyond that: the costly rows take up to a minute per event.
 */
function perEvent(filter: unknown, event: EventMessage, rounds: number) {
  const configs = [configOf(filter)];
  applyFilters(configs, { ...event, payload: {} });
  return timed(
    () => {
      const r = applyFilters(configs, event);
      return r.passed.length + r.filteredOut + r.broken.length;
    },
    rounds,
    false,
  );
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

  // ns per NFA step, one saturated pattern over 64 KiB of a's and b's.
  const probe = "[ab]*a[ab]{999}$";
  const probeText = 64 * 1024;
  const step = timed(() => (RE2JS.compile(probe).test(`${abText(probeText)}c`) ? 1 : 0), 3);
  const nsPerStep = (step.us * 1e3) / (programSize(probe) * probeText);

  const textEvent = largestTextEvent("largest-text");
  const textLength = (textEvent.payload as { text: string }).text.length;
  const many = manyRegexFilter();
  const manyPatterns = (many as { $or: unknown[] }).$or.length;
  const manySteps = manyPatterns * programSize(probe) * textLength;
  add(
    `${manyPatterns} x [ab]*a[ab]{999}$ (16 KiB), 2 MiB text`,
    many,
    (manySteps * nsPerStep) / 1e3,
    "estimated",
    { steps: manySteps },
  );
  const huge = oneHugeRegexFilter();
  const hugePattern = (huge as { "payload.text": { $regex: string } })["payload.text"].$regex;
  const hugeSteps = programSize(hugePattern) * textLength;
  add(
    "one regex of RE2's largest program (1.4 M instructions), 2 MiB text",
    huge,
    (hugeSteps * nsPerStep) / 1e3,
    "estimated",
    { steps: hugeSteps },
  );
  const list = perEvent(bigListFilter(), largestListEvent("largest-list"), LIST_ROUNDS);
  add("$in, $nin, $all of 1 000 / 1 000 / 600 values, array of 10^5", bigListFilter(), list.us, "measured", {
    roundsUs: list.roundsUs,
  });

  for (const r of rows) r.timesBaseline = Math.round((r.usPerEvent as number) / baselineUs);
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
