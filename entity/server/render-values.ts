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
