// The step budget of payload filters. Filters run synchronously on the event loop
// of the API and the consumer, so whatever one costs, every other event of the
// process waits for, whichever tenant it belongs to. Their cost is counted in
// steps, deterministically (the same filter and event always count the same), and
// an evaluation that would go over its budget stops: the filter counts as not
// matched, for a reason the event's answer, a metric and the log give.
//
// A step is one value visited by one operator (a comparison, a list lookup, an
// equality), or, for $regex, one RE2 instruction on one character: RE2's NFA, the
// engine re2js falls back to, does at most (program size x text length) of them,
// and that product is charged before the match runs, so no match that would go
// over the budget ever starts. Both kinds cost 20-60 ns here
// (bench/delivery/filter-bounds.ts), so 100 000 steps are a few milliseconds.

/** Steps one config's filter may take on one event. */
export const FILTER_STEPS = 25_000;

/**
 * Steps all filters of one event may take together, across the configs its type
 * matched (one tenant's: an event matches only its tenant's configs). Once spent,
 * the event's remaining filtered configs count as over budget without running.
 */
export const EVENT_STEPS = 50_000;

/** The filter stopped: it would have taken more steps than it was given. */
export class FilterBudgetExceeded extends Error {
  constructor(readonly limit: number) {
    super(`the filter needs more than ${limit} steps for this event (its budget)`);
  }
}

/** Counts the steps of one filter evaluation and stops it past `limit`. */
export class StepMeter {
  spent = 0;
  constructor(readonly limit: number = FILTER_STEPS) {}

  /** Adds `steps` (Infinity for work that is never done: a pattern over the limits); throws past the limit. */
  charge(steps: number): void {
    this.spent += steps;
    if (this.spent > this.limit) {
      this.spent = this.limit;
      throw new FilterBudgetExceeded(this.limit);
    }
  }
}

/** The budget of one event's filters: each gets FILTER_STEPS, or what is left of EVENT_STEPS if less. */
export class EventBudget {
  constructor(private left: number = EVENT_STEPS) {}

  /** A meter for the next filter, or null when the event's budget is spent. */
  next(): StepMeter | null {
    return this.left > 0 ? new StepMeter(Math.min(FILTER_STEPS, this.left)) : null;
  }

  /** Takes what a filter spent off the event's budget. */
  spend(meter: StepMeter): void {
    this.left -= meter.spent;
  }
}

// The meter of the evaluation running now. Evaluation is synchronous, so one
// module-level slot is enough: operators charge it without being handed it.
let running: StepMeter | null = null;

/** Charges the running evaluation (a no-op outside one). */
export function charge(steps: number): void {
  running?.charge(steps);
}

/** Runs `fn` with `meter` counting its steps. */
export function metered<T>(meter: StepMeter, fn: () => T): T {
  const outer = running;
  running = meter;
  try {
    return fn();
  } finally {
    running = outer;
  }
}
