import { createRequire } from "node:module";
import { RE2JS } from "re2js";
import type * as Sift from "sift";
import { charge, metered, StepMeter } from "./filter-budget.js";
import { patternOverLimits, programSize } from "./filter-limits.js";
import { allOperator, $in as hashedIn, $nin as hashedNin, jsonEquals } from "./filter-lists.js";
import { checkFilter, regexFlags } from "./filter-syntax.js";

// Filters (filter-syntax.ts) become predicates through sift, which implements
// MongoDB's matching rules (dotted paths, an array matching when any element
// does, comparisons within one type), given only the operators of our grammar:
// `$where` and friends do not exist here. `$regex` is ours, on RE2JS, whose
// matching is linear in the text: a pattern cannot make an event take
// exponential time the way a backtracking RegExp can. Every operator charges the
// step meter of the evaluation (filter-budget.ts), which stops it past its budget
// with FilterBudgetExceeded; $in, $nin and $all look values up in a Set
// (filter-lists.ts).

/**
 * Tests an event document (the message sent to endpoints: type, payload, ...),
 * counting steps on `meter` (a fresh one of FILTER_STEPS when none is given);
 * throws FilterBudgetExceeded when the filter would go over it.
 */
export type EventPredicate = (event: unknown, meter?: StepMeter) => boolean;

// sift is CommonJS whose exports Node's ESM loader only partly detects.
const sift = createRequire(import.meta.url)("sift") as typeof Sift;
const { createQueryTester, createQueryOperation, createEqualsOperation, $eq, $ne, $gt, $gte, $lt, $lte } =
  sift;
const { $size, $exists, $options, $not, $elemMatch, $and, $or, $nor } = sift;

/**
 * `$regex` on RE2: a partial match (as MongoDB's), on string values only. RE2's NFA
 * takes at most (program size x characters) steps, charged before the match runs.
 * A stored pattern past the write-time limits is not compiled: reaching a string
 * with it spends the whole budget.
 */
const $regex = (
  pattern: string,
  ownerQuery: { $options?: string },
  options: Parameters<typeof Sift.createEqualsOperation>[2],
) => {
  if (patternOverLimits(pattern) !== null) {
    return createEqualsOperation(
      (value: unknown) => {
        if (typeof value === "string") charge(Number.POSITIVE_INFINITY);
        return false;
      },
      ownerQuery,
      options,
    );
  }
  const re = RE2JS.compile(pattern, regexFlags(ownerQuery.$options ?? ""));
  const size = programSize(re);
  return createEqualsOperation(
    (value: unknown) => {
      if (typeof value !== "string") return false;
      charge(size * (value.length + 1));
      return re.test(value);
    },
    ownerQuery,
    options,
  );
};

type SiftOptions = NonNullable<Parameters<typeof Sift.createQueryTester>[1]>;
type Creator = (params: unknown, owner: unknown, options: unknown, name: string) => unknown;

/** The operator, charging one step each time it is given a value. */
const meteredOp =
  (create: Creator): Creator =>
  (...args) => {
    const op = create(...args) as { next(...a: unknown[]): unknown } | null;
    if (op) {
      const next = op.next.bind(op);
      op.next = (...a: unknown[]) => {
        charge(1);
        return next(...a);
      };
    }
    return op;
  };

const $all = allOperator(
  (value, owner, options) =>
    createQueryOperation(value, owner, options as SiftOptions) as unknown as ReturnType<
      Parameters<typeof allOperator>[0]
    >,
);
/** Our grammar's operators, before metering. */
const operators = {
  $eq,
  $ne,
  $gt,
  $gte,
  $lt,
  $lte,
  $in: hashedIn,
  $nin: hashedNin,
  $all,
  $size,
  $exists,
  $regex,
  $options,
  $not,
  $elemMatch,
  $and,
  $or,
  $nor,
};

const operations = Object.fromEntries(
  Object.entries(operators).map(([name, create]) => [name, meteredOp(create as Creator)]),
) as unknown as SiftOptions["operations"];

/** sift's equality (of literals and $eq, $ne), one step per value compared. */
const compare = (a: unknown, b: unknown) => {
  charge(1);
  return jsonEquals(a, b);
};

/**
 * Compiles a filter; throws a FilterSyntaxError for one that does not check.
 * `stored` is a config's filter as read (possibly written before the limits of
 * filter-limits.ts, or around the API): those limits are not applied to it, its
 * evaluation stays under the step budget all the same.
 */
export function compileFilter(filter: unknown, stored = false): EventPredicate {
  checkFilter(filter, "filter", !stored);
  const test = createQueryTester(filter as Sift.Query<unknown>, { operations, compare });
  return (event, meter = new StepMeter()) => metered(meter, () => test(event));
}
