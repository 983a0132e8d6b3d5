import type { EntityServerError } from "./errors.js";
import { isBytes, isDecimalLike, isoText, isPlainObject, nonFiniteText } from "./render-values.js";

/**
 * XML rendering (compact, UTF-8, no indentation: whitespace inside values is
 * data). The root element is named after the entity alias.
 *
 *   one entity   <config><id>…</id><name>…</name>…</config>
 *   a list       <config type="collection" count="2"><config>…</config><config>…</config></config>
 *   an error     <error><code>NOT_FOUND</code><status type="integer">404</status><message>…</message></error>
 *
 * Leaves carry a `type` attribute unless they are strings: integer, float,
 * decimal, boolean, datetime (ISO 8601), base64 (bytes). null is an empty
 * element with nil="true"; an empty string is an empty element without it.
 * A list is type="array" with one <item> per element; an object (Json
 * column) is type="object" with one child per key, and a key that is not a
 * valid XML name becomes <entry key="…">. Text that XML 1.0 cannot carry
 * (control characters, lone surrogates) is sent as encoding="base64" (UTF-8).
 */
export function renderXmlEntity(alias: string, row: unknown): string {
  return `${DECLARATION}${entityElement(alias, row)}`;
}

export function renderXmlCollection(alias: string, rows: readonly unknown[]): string {
  let body = "";
  for (const row of rows) body += entityElement(alias, row);
  return `${DECLARATION}<${alias} type="collection" count="${rows.length}">${body}</${alias}>`;
}

export function renderXmlError(err: EntityServerError): string {
  return (
    `${DECLARATION}<error><code>${err.code}</code><status type="integer">${err.status}</status>` +
    `<message>${escapeText(err.message)}</message>${err.field ? `<field>${escapeText(err.field)}</field>` : ""}</error>`
  );
}

const DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>';

const XML_NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/;
// Characters outside XML 1.0's Char production (with the u flag a lone surrogate is one code point).
const NOT_XML_CHAR = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;

function element(name: string, value: unknown, attrs = ""): string {
  const leaf = (type: string | undefined, text: string) =>
    `<${name}${attrs}${type ? ` type="${type}"` : ""}>${text}</${name}>`;
  switch (typeof value) {
    case "string":
      if (NOT_XML_CHAR.test(value)) {
        return `<${name}${attrs} encoding="base64">${Buffer.from(value, "utf8").toString("base64")}</${name}>`;
      }
      return value === "" ? `<${name}${attrs}/>` : leaf(undefined, escapeText(value));
    case "number":
      if (!Number.isFinite(value)) return leaf("float", nonFiniteText(value));
      return leaf(Number.isInteger(value) ? "integer" : "float", String(value));
    case "bigint":
      return leaf("integer", value.toString());
    case "boolean":
      return leaf("boolean", value ? "true" : "false");
    case "undefined":
      return `<${name}${attrs} nil="true"/>`;
    case "object": {
      if (value === null) return `<${name}${attrs} nil="true"/>`;
      if (value instanceof Date) {
        return Number.isNaN(value.getTime())
          ? `<${name}${attrs} nil="true"/>`
          : leaf("datetime", isoText(value));
      }
      if (isBytes(value)) {
        return leaf(
          "base64",
          Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString("base64"),
        );
      }
      if (isDecimalLike(value)) return leaf("decimal", value.toFixed());
      if (Array.isArray(value)) {
        if (value.length === 0) return `<${name}${attrs} type="array"/>`;
        let body = "";
        for (const item of value) body += element("item", item);
        return `<${name}${attrs} type="array">${body}</${name}>`;
      }
      if (isPlainObject(value)) return objectElement(name, attrs, value);
      return leaf(undefined, escapeText(String(value)));
    }
    default:
      return leaf(undefined, escapeText(String(value)));
  }
}

/** An entity: one child per field, no type attribute. Anything else renders as a value. */
function entityElement(alias: string, row: unknown): string {
  if (!isPlainObject(row)) return element(alias, row);
  const body = children(row);
  return body === "" ? `<${alias}/>` : `<${alias}>${body}</${alias}>`;
}

/** A Json object: type="object", one child per key. */
function objectElement(name: string, attrs: string, obj: Record<string, unknown>): string {
  const body = children(obj);
  return body === ""
    ? `<${name}${attrs} type="object"/>`
    : `<${name}${attrs} type="object">${body}</${name}>`;
}

function children(obj: Record<string, unknown>): string {
  let body = "";
  for (const key in obj) {
    const v = obj[key];
    if (v === undefined) continue;
    body += XML_NAME.test(key) ? element(key, v) : element("entry", v, ` key="${escapeAttr(key)}"`);
  }
  return body;
}

function escapeText(text: string): string {
  return text.replace(/[&<>\r]/g, (c) =>
    c === "&" ? "&amp;" : c === "<" ? "&lt;" : c === ">" ? "&gt;" : "&#13;",
  );
}

function escapeAttr(text: string): string {
  return text.replace(/[&<>"\r\n\t]/g, (c) => `&#${c.charCodeAt(0)};`);
}
