// Deep copy of settings data (plain tables, arrays and scalars, as TOML and JSON parsers give).
// Much cheaper than structuredClone for small documents; other objects (dates) are shared.
export function deepClone<T>(value: T): T {
  if (Array.isArray(value)) return value.map(deepClone) as T;
  if (value !== null && typeof value === "object" && isPlain(value)) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value)) out[key] = deepClone((value as Record<string, unknown>)[key]);
    return out as T;
  }
  return value;
}

/** Plain tables: object literals, JSON.parse output, and null-prototype objects (as TOML parsers make). */
function isPlain(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
