import { charge } from "./filter-budget.js";

// $in, $nin and $all by hashing: a list's scalar values go into a Set, so testing
// a value costs one lookup whatever the list's length, and an array field of
// 10^5 elements against a list of 256 values costs 10^5 lookups, not 2.56 x 10^7
// comparisons (sift's own operators compare every value with every element).
// Object and array values of a list are compared one by one, deeply. Matching is
// sift's (17.1.4): the same walk over array fields, the same equality (a list's
// null also matches a missing field), checked by payload-filter-language.test.ts.

const tag = (v: unknown) => Object.prototype.toString.call(v);

/** sift's equality on JSON values: deep, key order ignored; null equals a missing value. */
export function jsonEquals(a: unknown, b: unknown): boolean {
  if ((a === null || a === undefined) && (b === null || b === undefined)) return true;
  if (a === b) return true;
  if (tag(a) !== tag(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    if (a.length !== other.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEquals(a[i], other[i])) return false;
    return true;
  }
  if (tag(a) === "[object Object]") {
    const x = a as Record<string, unknown>;
    const y = b as Record<string, unknown>;
    if (Object.keys(x).length !== Object.keys(y).length) return false;
    for (const key of Object.keys(x)) if (!jsonEquals(x[key], y[key])) return false;
    return true;
  }
  return false;
}

const isScalar = (v: unknown) => v === null || v === undefined || typeof v !== "object";

/** A list's values: scalars hashed, objects and arrays compared in turn. */
class ValueSet {
  private readonly scalars = new Set<unknown>();
  private readonly composites: unknown[] = [];

  constructor(values: unknown[]) {
    for (const v of values) {
      if (isScalar(v)) this.scalars.add(v ?? null);
      else this.composites.push(v);
    }
  }

  has(value: unknown): boolean {
    charge(1);
    if (isScalar(value)) return this.scalars.has(value ?? null);
    for (const c of this.composites) {
      charge(1);
      if (jsonEquals(c, value)) return true;
    }
    return false;
  }
}

/** As sift skips it: a named field missing from an array element. */
const missingInArray = (key: unknown, owner: unknown) =>
  Array.isArray(owner) && !((key as PropertyKey) in owner) && Number.isNaN(Number(key));

/** sift's operation shape (its Operation interface). */
abstract class ListOperation {
  readonly propop = true;
  keep = false;
  done = false;
  protected readonly values: ValueSet;
  constructor(
    readonly params: unknown[],
    readonly name: string,
  ) {
    this.values = new ValueSet(params);
    this.reset();
  }
  reset(): void {
    this.keep = false;
    this.done = false;
  }
  abstract next(item: unknown, key: unknown, owner: unknown): void;
}

/** $in: a value on the path equals one of the list's. */
class In extends ListOperation {
  next(item: unknown, key: unknown, owner: unknown): void {
    if (missingInArray(key, owner)) return;
    const hit = this.values.has(item);
    this.keep = hit;
    this.done = hit;
  }
}

/** $nin: no value on the path equals one of the list's. */
class Nin extends ListOperation {
  override reset(): void {
    this.keep = true;
    this.done = false;
  }
  next(item: unknown, key: unknown, owner: unknown): void {
    if (!missingInArray(key, owner) && this.values.has(item)) {
      this.keep = false;
      this.done = true;
    }
  }
}

/** The part of sift's operation interface $all's object values use. */
interface SubQuery {
  keep: boolean;
  done: boolean;
  reset(): void;
  next(item: unknown, key: unknown, owner: unknown, root: boolean, leaf: boolean): void;
}

/**
 * $all: every value of the list equals some value on the path, an array's elements
 * (at any depth, as sift walks them) and the array itself included. A plain object
 * in the list is, as in sift, a query of its own over each value's fields
 * (`{"$all": [{"sku": "a"}]}`): those run as sift's operations, given by `subQuery`.
 */
class All extends ListOperation {
  private pending = new Set<unknown>();
  private arrays: unknown[] = [];
  private readonly queries: SubQuery[];
  constructor(params: unknown[], name: string, subQuery: (value: unknown) => SubQuery) {
    super(params, name);
    this.queries = params.filter((v) => !isScalar(v) && !Array.isArray(v)).map(subQuery);
    this.reset();
  }
  override reset(): void {
    this.keep = false;
    this.done = false;
    this.pending = new Set(this.params.filter(isScalar).map((v) => v ?? null));
    this.arrays = this.params.filter(Array.isArray);
    for (const q of this.queries ?? []) q.reset();
  }
  private see(value: unknown, key: unknown, owner: unknown): void {
    charge(1);
    if (Array.isArray(value)) for (const [i, v] of value.entries()) this.see(v, i, value);
    // sift's equality skips an index an array does not hold.
    if (Array.isArray(owner) && !Object.hasOwn(owner, key as PropertyKey)) return;
    if (isScalar(value)) this.pending.delete(value ?? null);
    else if (Array.isArray(value) && this.arrays.length > 0) {
      this.arrays = this.arrays.filter((a) => {
        charge(1);
        return !jsonEquals(a, value);
      });
    }
  }
  next(item: unknown, key: unknown, owner: unknown, root = false, leaf = true): void {
    this.see(item, key, owner);
    for (const q of this.queries) if (!q.done) q.next(item, key, owner, root, leaf);
    if (this.pending.size === 0 && this.arrays.length === 0 && this.queries.every((q) => q.keep)) {
      this.keep = true;
      this.done = true;
    }
  }
}

export const $in = (params: unknown[], _owner: unknown, _options: unknown, name: string) =>
  new In(params, name);
export const $nin = (params: unknown[], _owner: unknown, _options: unknown, name: string) =>
  new Nin(params, name);
/** $all, its object values run by `subQuery` (sift's createQueryOperation with the filter's options). */
export const allOperator =
  (subQuery: (value: unknown, owner: unknown, options: unknown) => SubQuery) =>
  (params: unknown[], owner: unknown, options: unknown, name: string) =>
    new All(params, name, (v) => subQuery(v, owner, options));
