/** Value kinds shared by the XML and JSON renderers. */

export function isBytes(value: unknown): value is Uint8Array {
  return value instanceof Uint8Array;
}

/** Prisma's Decimal (decimal.js) and similar arbitrary-precision numbers. */
export function isDecimalLike(value: unknown): value is { toFixed(): string } {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { toFixed?: unknown }).toFixed === "function" &&
    typeof (value as { isNaN?: unknown }).isNaN === "function"
  );
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** Text of a non-finite float, which JSON cannot hold as a number. */
export function nonFiniteText(n: number): string {
  return Number.isNaN(n) ? "NaN" : n > 0 ? "Infinity" : "-Infinity";
}

const pad2 = (n: number) => (n < 10 ? `0${n}` : `${n}`);
const pad3 = (n: number) => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`);

/**
 * What `date.toISOString()` gives for a valid date, built from the UTC fields:
 * toISOString is several times slower, and a list renders two or more per row.
 */
export function isoText(date: Date): string {
  const year = date.getUTCFullYear();
  if (year < 1000 || year > 9999) return date.toISOString(); // padded or signed 6-digit years
  return (
    `${year}-${pad2(date.getUTCMonth() + 1)}-${pad2(date.getUTCDate())}T${pad2(date.getUTCHours())}:` +
    `${pad2(date.getUTCMinutes())}:${pad2(date.getUTCSeconds())}.${pad3(date.getUTCMilliseconds())}Z`
  );
}
