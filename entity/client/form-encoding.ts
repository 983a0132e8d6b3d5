/**
 * application/x-www-form-urlencoded parameters, the encoding the entity server
 * reads: strings as they are, numbers and booleans as text, dates as ISO 8601,
 * null as an empty value (the server stores null, or "" for text fields),
 * undefined left out, lists as repeated `name[]` keys (an empty list as a
 * single empty `name[]`), and objects as JSON text (for Json columns).
 */
export function encodeForm(params: Record<string, unknown>): string {
  const out = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) {
      if (value.length === 0) out.append(`${key}[]`, "");
      for (const item of value) out.append(`${key}[]`, scalarText(item));
    } else {
      out.append(key, scalarText(value));
    }
  }
  return out.toString();
}

function scalarText(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (value instanceof Date) return value.toISOString();
  if (value instanceof Uint8Array) return Buffer.from(value).toString("base64");
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}
