import { createRequire } from "node:module";
import { RE2JS } from "re2js";
import type * as Sift from "sift";
import { checkFilter, regexFlags } from "./filter-syntax.js";

// Filters (filter-syntax.ts) become predicates through sift, which implements
// MongoDB's matching rules (dotted paths, an array matching when any element
// does, comparisons within one type), given only the operators of our grammar:
// `$where` and friends do not exist here. `$regex` is ours, on RE2JS, whose
// matching is linear in the text: a pattern cannot make an event take
// exponential time the way a backtracking RegExp can.

/** Tests an event document (the message sent to endpoints: type, payload, ...). */
export type EventPredicate = (event: unknown) => boolean;

// sift is CommonJS whose exports Node's ESM loader only partly detects.
const sift = createRequire(import.meta.url)("sift") as typeof Sift;
const { createQueryTester, createEqualsOperation, $eq, $ne, $gt, $gte, $lt, $lte, $in, $nin } = sift;
const { $all, $size, $exists, $options, $not, $elemMatch, $and, $or, $nor } = sift;

/** `$regex` on RE2: a partial match (as MongoDB's), on string values only. */
const $regex = (
  pattern: string,
  ownerQuery: { $options?: string },
  options: Parameters<typeof Sift.createEqualsOperation>[2],
) => {
  const re = RE2JS.compile(pattern, regexFlags(ownerQuery.$options ?? ""));
  return createEqualsOperation(
    (value: unknown) => typeof value === "string" && re.test(value),
    ownerQuery,
    options,
  );
};

const operations = {
  $eq,
  $ne,
  $gt,
  $gte,
  $lt,
  $lte,
  $in,
  $nin,
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

/** Compiles a filter; throws a FilterSyntaxError for one that does not check (a row written around the API). */
export function compileFilter(filter: unknown): EventPredicate {
  checkFilter(filter);
  return createQueryTester(filter as Sift.Query<unknown>, { operations });
}
