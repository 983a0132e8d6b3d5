import type { EntityServerError } from "./errors.js";
import { isBytes, isDecimalLike, isPlainObject, nonFiniteText } from "./render-values.js";

/**
 * JSON rendering. One entity is a flat object of its fields; a list is an
 * array of such objects; an error is {"error":{code,status,message,field?}}.
 * Dates are ISO 8601 strings, 64-bit integers and decimals are strings (no
 * precision is lost), bytes are base64, null stays null, empty strings and
 * empty lists are kept.
 */
export function renderJson(value: unknown): string {
  return JSON.stringify(toJsonValue(value));
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

function toJsonValue(value: unknown): unknown {
  switch (typeof value) {
    case "string":
    case "boolean":
      return value;
    case "number":
      return Number.isFinite(value) ? value : nonFiniteText(value);
    case "bigint":
      return value.toString();
    case "undefined":
      return null;
    case "object": {
      if (value === null) return null;
      if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
      if (Array.isArray(value)) return value.map(toJsonValue);
      if (isBytes(value))
        return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString("base64");
      if (isDecimalLike(value)) return value.toFixed();
      if (isPlainObject(value)) {
        const out: Record<string, unknown> = {};
        for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = toJsonValue(v);
        return out;
      }
      return String(value);
    }
    default:
      return String(value);
  }
}
