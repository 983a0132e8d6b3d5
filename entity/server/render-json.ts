import type { EntityServerError } from "./errors.js";
import { isBytes, isDecimalLike, isoText, isPlainObject, nonFiniteText } from "./render-values.js";

/**
 * JSON rendering. One entity is a flat object of its fields; a list is an
 * array of such objects; an error is {"error":{code,status,message,field?}}.
 * Dates are ISO 8601 strings, 64-bit integers and decimals are strings (no
 * precision is lost), bytes are base64, null stays null, empty strings and
 * empty lists are kept.
 */
export function renderJson(value: unknown): string {
  return jsonText(value);
}

export function renderJsonError(err: EntityServerError): string {
  return JSON.stringify({
    error: {
      code: err.code,
      status: err.status,
      message: err.message,
      ...(err.field ? { field: err.field } : {}),
    },
  });
}

/**
 * The JSON text of a value, written in one pass: no converted copy is built,
 * and dates do not send JSON.stringify down its slow path (toJSON calls),
 * which for a list of rows cost more than the rest of the rendering.
 */
function jsonText(value: unknown): string {
  switch (typeof value) {
    case "string":
      return JSON.stringify(value);
    case "boolean":
      return value ? "true" : "false";
    case "number":
      return Number.isFinite(value) ? String(value) : `"${nonFiniteText(value)}"`;
    case "bigint":
      return `"${value}"`;
    case "undefined":
      return "null";
    case "object": {
      if (value === null) return "null";
      if (value instanceof Date) return Number.isNaN(value.getTime()) ? "null" : `"${isoText(value)}"`;
      if (Array.isArray(value)) {
        let out = "[";
        for (let i = 0; i < value.length; i++) out += i === 0 ? jsonText(value[i]) : `,${jsonText(value[i])}`;
        return `${out}]`;
      }
      if (isBytes(value))
        return `"${Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString("base64")}"`;
      if (isDecimalLike(value)) return JSON.stringify(value.toFixed());
      if (isPlainObject(value)) {
        let out = "{";
        for (const key of Object.keys(value)) {
          const v = value[key];
          // An own "__proto__" key (JSON.parse makes one) has never been rendered: copied into a
          // plain object, it set that object's prototype instead of a property.
          if (v === undefined || key === "__proto__") continue;
          out += `${out.length === 1 ? "" : ","}${keyText(key)}:${jsonText(v)}`;
        }
        return `${out}}`;
      }
      return JSON.stringify(String(value));
    }
    default:
      return JSON.stringify(String(value));
  }
}

// Field names repeat on every row; keys of JSON values are the caller's data, so the cache is capped.
const KEY_TEXT = new Map<string, string>();
const KEY_TEXT_MAX = 10_000;

function keyText(key: string): string {
  let text = KEY_TEXT.get(key);
  if (text === undefined) {
    text = JSON.stringify(key);
    if (KEY_TEXT.size < KEY_TEXT_MAX) KEY_TEXT.set(key, text);
  }
  return text;
}
