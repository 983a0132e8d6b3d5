import { RE2JS } from "re2js";
import {
  MAX_LIST_VALUES,
  MAX_REGEX_PROGRAM,
  MAX_REGEXES,
  patternOverLimits,
  programSize,
} from "./filter-limits.js";

// The payload filter language: MongoDB's query operators, as Convoy and most
// document stores let users write them. This file is its grammar: what a
// config may store, checked once on write, every problem named by its path
// (`filter.$or[1]["payload.amount"].$gt`). Matching is filter-compile.ts.
//
//   document   := { ("$and" | "$or" | "$nor"): [document, ...], "$not": document, <path>: condition, ... }
//   condition  := literal (deep equality; an array field matches when any element does)
//               | { <operator>: argument, ... }   (every key an operator)

/** Largest filter, as JSON: it is evaluated for every event of the config's types. */
export const MAX_FILTER_BYTES = 16 * 1024;

/** Deepest nesting of documents and conditions. */
const MAX_FILTER_DEPTH = 32;

/** A filter that cannot be stored, with the path of what is wrong. */
export class FilterSyntaxError extends Error {
  constructor(
    readonly path: string,
    problem: string,
  ) {
    super(`${path} ${problem}`);
  }
}

const LOGICAL = new Set(["$and", "$or", "$nor"]);
const COMPARISON = new Set(["$gt", "$gte", "$lt", "$lte"]);
/** Operators of a condition (what applies to one field's value). */
const CONDITION_OPERATORS = [
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
  "$regex",
  "$options",
  "$not",
  "$elemMatch",
];
const CONDITION = new Set(CONDITION_OPERATORS);

/** `$options` letters and the RE2 flag each one sets. */
export const REGEX_FLAGS: Record<string, number> = {
  i: RE2JS.CASE_INSENSITIVE,
  m: RE2JS.MULTILINE,
  s: RE2JS.DOTALL,
};

/**
 * Names every plain object inherits: a path through one would read the
 * prototype (`payload.constructor` exists on every event), so paths may not
 * name them.
 */
const INHERITED = new Set(Object.getOwnPropertyNames(Object.prototype));

/** One check's state: whether the write-time limits apply, and what is counted against them. */
interface Check {
  bounds: boolean;
  regexes: number;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

const describe = (v: unknown): string => {
  const text = JSON.stringify(v) ?? String(v);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
};

const member = (path: string, key: string): string =>
  /^[$A-Za-z_][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;

/** The regex flags of `$options`, or a reason it is refused. */
export function regexFlags(options: string): number {
  let flags = 0;
  for (const letter of options) {
    const flag = REGEX_FLAGS[letter];
    if (flag === undefined) throw new Error(`unknown flag ${JSON.stringify(letter)}`);
    flags |= flag;
  }
  return flags;
}

function checkPath(key: string, path: string): void {
  const at = member(path, key);
  if (key === "") throw new FilterSyntaxError(at, "is an empty field path");
  for (const segment of key.split(".")) {
    if (segment === "")
      throw new FilterSyntaxError(at, "has an empty segment (a field path is dotted: payload.order.id)");
    if (INHERITED.has(segment)) {
      throw new FilterSyntaxError(
        at,
        `names ${JSON.stringify(segment)}, which every JSON object inherits; it cannot be filtered on`,
      );
    }
  }
}

function checkDocument(doc: unknown, path: string, depth: number, check: Check): void {
  if (!isObject(doc))
    throw new FilterSyntaxError(path, `must be a JSON object (a filter document), got ${describe(doc)}`);
  if (depth > MAX_FILTER_DEPTH)
    throw new FilterSyntaxError(path, `nests deeper than ${MAX_FILTER_DEPTH} levels`);
  for (const [key, value] of Object.entries(doc)) {
    const at = member(path, key);
    if (LOGICAL.has(key)) {
      if (!Array.isArray(value) || value.length === 0) {
        throw new FilterSyntaxError(
          at,
          `must be a non-empty array of filter documents, got ${describe(value)}`,
        );
      }
      for (const [i, d] of value.entries()) checkDocument(d, `${at}[${i}]`, depth + 1, check);
    } else if (key === "$not") {
      checkDocument(value, at, depth + 1, check);
    } else if (key.startsWith("$")) {
      throw new FilterSyntaxError(
        at,
        CONDITION.has(key)
          ? 'applies to a field: write it under a field path ({"payload.amount": {"$gt": 10}})'
          : `is not a supported operator; a filter document takes $and, $or, $nor, $not and field paths`,
      );
    } else {
      checkPath(key, path);
      checkCondition(value, at, depth + 1, check);
    }
  }
}

/** An object whose keys all start with `$` is a condition; any other value is a literal to equal. */
function checkCondition(value: unknown, path: string, depth: number, check: Check): void {
  if (!isObject(value)) return;
  const keys = Object.keys(value);
  const operators = keys.filter((k) => k.startsWith("$"));
  if (operators.length === 0) return;
  if (operators.length !== keys.length) {
    const field = keys.find((k) => !k.startsWith("$"))!;
    throw new FilterSyntaxError(
      path,
      `mixes operators with the field ${JSON.stringify(field)}: a condition holds only operators, a literal object none`,
    );
  }
  if (depth > MAX_FILTER_DEPTH)
    throw new FilterSyntaxError(path, `nests deeper than ${MAX_FILTER_DEPTH} levels`);
  for (const [op, arg] of Object.entries(value))
    checkOperator(op, arg, value, member(path, op), depth, check);
}

/** A $regex pattern: RE2 must take it, and on write it must be within the limits. */
function checkRegex(pattern: string, condition: Record<string, unknown>, at: string, check: Check): void {
  const over = patternOverLimits(pattern);
  if (check.bounds) {
    if (++check.regexes > MAX_REGEXES)
      throw new FilterSyntaxError(at, `is one $regex too many: a filter may have at most ${MAX_REGEXES}`);
    if (over) throw new FilterSyntaxError(at, over);
  } else if (over) {
    // Stored past the limits: never compiled (compiling RE2's largest program takes
    // seconds); matching counts it as over budget (filter-compile.ts).
    return;
  }
  let flags = 0;
  if (typeof condition.$options === "string") {
    try {
      flags = regexFlags(condition.$options);
    } catch {
      // Reported at $options itself.
    }
  }
  let re: RE2JS;
  try {
    re = RE2JS.compile(pattern, flags);
  } catch (err) {
    throw new FilterSyntaxError(
      at,
      `is not an RE2 regular expression (no lookaround, no backreferences): ${(err as Error).message}`,
    );
  }
  if (check.bounds && programSize(re) > MAX_REGEX_PROGRAM) {
    throw new FilterSyntaxError(
      at,
      `compiles to ${programSize(re)} RE2 instructions; a pattern may compile to at most ${MAX_REGEX_PROGRAM} (each costs a step per character matched)`,
    );
  }
}

function checkOperator(
  op: string,
  arg: unknown,
  condition: Record<string, unknown>,
  at: string,
  depth: number,
  check: Check,
): void {
  const refuse = (expected: string) => {
    throw new FilterSyntaxError(at, `must be ${expected}, got ${describe(arg)}`);
  };
  if (COMPARISON.has(op)) {
    // Compared within its type only: a number with numbers, a string with strings (ISO dates order as text).
    if (typeof arg !== "number" && typeof arg !== "string") refuse("a number or a string");
  } else if (op === "$in" || op === "$nin" || op === "$all") {
    if (!Array.isArray(arg)) refuse("an array of values");
    if (op === "$all" && (arg as unknown[]).length === 0) refuse("a non-empty array of values");
    if (check.bounds && (arg as unknown[]).length > MAX_LIST_VALUES) {
      throw new FilterSyntaxError(
        at,
        `has ${(arg as unknown[]).length} values; a list may have at most ${MAX_LIST_VALUES}`,
      );
    }
    for (const [i, v] of (arg as unknown[]).entries()) {
      if (isObject(v) && Object.keys(v).some((k) => k.startsWith("$"))) {
        throw new FilterSyntaxError(
          `${at}[${i}]`,
          "must be a value: operators cannot be nested in a list of values",
        );
      }
    }
  } else if (op === "$size") {
    if (!Number.isSafeInteger(arg) || (arg as number) < 0) refuse("a non-negative integer");
  } else if (op === "$exists") {
    if (typeof arg !== "boolean") refuse("true or false");
  } else if (op === "$regex") {
    if (typeof arg !== "string") refuse("a string (an RE2 regular expression)");
    checkRegex(arg as string, condition, at, check);
  } else if (op === "$options") {
    if (!("$regex" in condition)) throw new FilterSyntaxError(at, "applies only beside $regex");
    if (typeof arg !== "string") refuse('a string of regex flags ("i", "m", "s")');
    try {
      regexFlags(arg as string);
    } catch (err) {
      throw new FilterSyntaxError(
        at,
        `${(err as Error).message}: the flags are i (case-insensitive), m (multi-line), s (dot matches newline)`,
      );
    }
  } else if (op === "$not") {
    if (
      !isObject(arg) ||
      Object.keys(arg).length === 0 ||
      !Object.keys(arg).every((k) => k.startsWith("$"))
    ) {
      refuse('a condition of operators ({"$gt": 10})');
    }
    checkCondition(arg, at, depth + 1, check);
  } else if (op === "$elemMatch") {
    if (!isObject(arg) || Object.keys(arg).length === 0) refuse("a non-empty condition or filter document");
    const keys = Object.keys(arg as object);
    // Like MongoDB: operators alone test each element itself, anything else is a document over its fields.
    if (keys.every((k) => CONDITION.has(k))) checkCondition(arg, at, depth + 1, check);
    else checkDocument(arg, at, depth + 1, check);
  } else if (op !== "$eq" && op !== "$ne") {
    throw new FilterSyntaxError(
      at,
      `is not a supported operator; a condition takes ${CONDITION_OPERATORS.join(", ")}`,
    );
  }
}

/**
 * Checks a filter as a config would store it; throws a FilterSyntaxError
 * naming the path of the first problem. `null` (no filter) is valid. With
 * `bounds` false, the limits of filter-limits.ts are not checked: a stored
 * filter past them still runs, under the step budget.
 */
export function checkFilter(filter: unknown, path = "filter", bounds = true): void {
  if (filter === null) return;
  const bytes = Buffer.byteLength(JSON.stringify(filter) ?? "");
  if (bytes > MAX_FILTER_BYTES) {
    throw new FilterSyntaxError(path, `must be at most ${MAX_FILTER_BYTES} bytes as JSON, got ${bytes}`);
  }
  checkDocument(filter, path, 1, { bounds, regexes: 0 });
}
