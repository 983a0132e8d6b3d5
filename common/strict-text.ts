import { isUtf8 } from "node:buffer";
import { visit } from "jsonc-parser";

// Checks for request text that two parsers could read differently, or that
// storage would silently alter: invalid UTF-8 (decoders put U+FFFD in its
// place), lone surrogates (encoded as U+FFFD on the way to the database), NUL
// (PostgreSQL text refuses it) and duplicate JSON keys (JSON.parse keeps the
// last, other parsers the first). Each throws an Error naming the problem.

/** The bytes as UTF-8 text; refuses bytes that are not UTF-8. */
export function decodeUtf8(bytes: Buffer, what = "request body"): string {
  if (!isUtf8(bytes)) throw new Error(`${what} is not valid UTF-8`);
  return bytes.toString("utf8");
}

/** Refuses a JSON text in which one object has the same key twice (after unescaping). */
export function assertNoDuplicateKeys(text: string): void {
  const open: Set<string>[] = [];
  let duplicate: string | undefined;
  visit(text, {
    onObjectBegin: () => {
      open.push(new Set());
    },
    onObjectEnd: () => {
      open.pop();
    },
    onObjectProperty: (key, _offset, _length, _line, _column, path) => {
      const keys = open[open.length - 1];
      if (!keys || duplicate !== undefined) return;
      if (keys.has(key)) duplicate = jsonPath([...path(), key]);
      keys.add(key);
    },
  });
  if (duplicate !== undefined) throw new Error(`duplicate key "${duplicate}" in the JSON body`);
}

/** JSON.parse, refusing duplicate keys too. */
export function parseStrictJson(text: string): unknown {
  const value: unknown = JSON.parse(text);
  assertNoDuplicateKeys(text);
  return value;
}

// In a /u pattern a surrogate pair is one code point, so \p{Cs} matches only unpaired halves.
const LONE_SURROGATE = /\p{Cs}/u;

/** True when the text holds a lone surrogate (UTF-8 cannot encode it: it would become U+FFFD). */
export const hasLoneSurrogate = (text: string): boolean => LONE_SURROGATE.test(text);

/**
 * The first string (value or key) at any depth that holds a NUL or a lone
 * surrogate, as "path: problem"; undefined when all text is storable.
 */
export function unstorableText(value: unknown, path = ""): string | undefined {
  if (typeof value === "string") {
    if (value.includes("\u0000")) return `${path || "value"}: contains a NUL character`;
    if (LONE_SURROGATE.test(value))
      return `${path || "value"}: contains a lone surrogate (not valid Unicode)`;
    return undefined;
  }
  if (value === null || typeof value !== "object") return undefined;
  for (const [key, item] of Object.entries(value)) {
    const at = Array.isArray(value) ? `${path}[${key}]` : path ? `${path}.${key}` : key;
    const problem = unstorableText(key, `key of ${at}`) ?? unstorableText(item, at);
    if (problem) return problem;
  }
  return undefined;
}

function jsonPath(parts: (string | number)[]): string {
  return parts.reduce<string>(
    (acc, p) => (typeof p === "number" ? `${acc}[${p}]` : acc ? `${acc}.${p}` : p),
    "",
  );
}
