import type { FieldInfo } from "./entity-manager.js";
import { validationError } from "./errors.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;

/**
 * Parses one request value (form text, or a JSON value) into the field's type.
 * An empty string means null for every type but String; a list field takes a
 * list or a single value (a one-element list).
 */
export function parseFieldValue(field: FieldInfo, raw: unknown): unknown {
  if (raw === null) return null;
  if (field.list) {
    const items = Array.isArray(raw) ? raw : [raw];
    return items.map((item, i) => parseScalar(field, item, `${field.name}[${i}]`));
  }
  if (Array.isArray(raw)) {
    if (raw.length !== 1)
      throw validationError(`${field.name}: expected a single value, got ${raw.length}`, field.name);
    return parseScalar(field, raw[0], field.name);
  }
  return parseScalar(field, raw, field.name);
}

function parseScalar(field: FieldInfo, raw: unknown, label: string): unknown {
  const fail = (expected: string): never => {
    throw validationError(`${label}: expected ${expected}, got ${JSON.stringify(raw)}`, field.name);
  };
  if (raw === null) return null;
  if (raw === "" && field.type !== "String" && field.type !== "Json") return null;
  switch (field.type) {
    case "String":
    case "Enum":
      // Checked here, so a malformed uuid never reaches the database.
      if (field.uuid) return typeof raw === "string" && UUID.test(raw) ? raw : fail("a UUID");
      if (typeof raw === "string") return raw;
      if (typeof raw === "number" || typeof raw === "boolean") return String(raw);
      return fail("a string");
    case "Int": {
      const n =
        typeof raw === "number"
          ? raw
          : typeof raw === "string" && /^\s*-?\d+\s*$/.test(raw)
            ? Number(raw)
            : Number.NaN;
      if (!Number.isInteger(n) || n < INT32_MIN || n > INT32_MAX) return fail("a 32-bit integer");
      return n;
    }
    case "BigInt":
      if (typeof raw === "bigint") return raw;
      if (
        (typeof raw === "number" && Number.isInteger(raw)) ||
        (typeof raw === "string" && /^\s*-?\d+\s*$/.test(raw))
      ) {
        return BigInt(typeof raw === "string" ? raw.trim() : raw);
      }
      return fail("an integer");
    case "Float": {
      const n =
        typeof raw === "number"
          ? raw
          : typeof raw === "string" && raw.trim() !== ""
            ? Number(raw)
            : Number.NaN;
      if (!Number.isFinite(n)) return fail("a number");
      return n;
    }
    case "Decimal": {
      const text = typeof raw === "number" ? String(raw) : typeof raw === "string" ? raw.trim() : "";
      if (!/^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(text)) return fail("a decimal number");
      return text;
    }
    case "Boolean":
      if (typeof raw === "boolean") return raw;
      if (typeof raw === "string" || typeof raw === "number") {
        const t = String(raw).trim().toLowerCase();
        if (t === "true" || t === "1") return true;
        if (t === "false" || t === "0") return false;
      }
      return fail("true or false");
    case "DateTime": {
      if (raw instanceof Date && !Number.isNaN(raw.getTime())) return raw;
      if (
        typeof raw !== "string" ||
        !/^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(raw.trim())
      ) {
        return fail("an ISO 8601 date-time such as 2026-01-31T12:00:00Z");
      }
      const d = new Date(raw.trim());
      if (Number.isNaN(d.getTime())) return fail("a valid date-time");
      return d;
    }
    case "Json":
      if (typeof raw !== "string") return raw;
      try {
        return JSON.parse(raw);
      } catch {
        return fail("JSON text");
      }
    case "Bytes":
      if (typeof raw !== "string" || !/^[A-Za-z0-9+/]*={0,2}$/.test(raw) || raw.length % 4 !== 0)
        return fail("base64");
      return Buffer.from(raw, "base64");
  }
}
