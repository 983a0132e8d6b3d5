import { isUtf8 } from "node:buffer";
import { createScanner, SyntaxKind } from "jsonc-parser";

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

/**
 * How deep request bodies may nest. The recursive walk this check used to be
 * ran out of stack between 1 000 and 5 000 levels, which the services answered
 * as malformed JSON; the bound keeps that answer, now by design.
 */
export const MAX_JSON_DEPTH = 1000;

/**
 * Refuses a JSON text in which one object has the same key twice (after
 * unescaping), or that nests deeper than `maxDepth`. Walks the tokens with a
 * stack of its own, so any depth JSON.parse accepts can be checked.
 */
export function assertNoDuplicateKeys(text: string, maxDepth = MAX_JSON_DEPTH): void {
  const scanner = createScanner(text, true);
  // One frame per open object or array: the keys seen (objects), the next key or index.
  const open: { keys?: Set<string>; at: string | number; expectKey: boolean }[] = [];
  for (let token = scanner.scan(); token !== SyntaxKind.EOF; token = scanner.scan()) {
    const top = open[open.length - 1];
    switch (token) {
      case SyntaxKind.OpenBraceToken:
      case SyntaxKind.OpenBracketToken:
        if (open.length >= maxDepth) throw new Error(`the JSON nests deeper than ${maxDepth} levels`);
        open.push(
          token === SyntaxKind.OpenBraceToken
            ? { keys: new Set(), at: "", expectKey: true }
            : { at: 0, expectKey: false },
        );
        break;
      case SyntaxKind.CloseBraceToken:
      case SyntaxKind.CloseBracketToken:
        open.pop();
        break;
      case SyntaxKind.CommaToken:
        if (top?.keys) top.expectKey = true;
        else if (top) top.at = (top.at as number) + 1;
        break;
      case SyntaxKind.StringLiteral:
        if (top?.keys && top.expectKey) {
          const key = scanner.getTokenValue();
          top.expectKey = false;
          top.at = key;
          if (top.keys.has(key)) {
            throw new Error(`duplicate key "${jsonPath(open.map((f) => f.at))}" in the JSON body`);
          }
          top.keys.add(key);
        }
        break;
    }
  }
}

/** JSON.parse, refusing duplicate keys and nesting deeper than MAX_JSON_DEPTH too. */
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
 * surrogate, as "path: problem"; undefined when all text is storable. Walks
 * with a stack of its own (any depth JSON.parse accepts) and builds a path only
 * for the problem it reports.
 */
export function unstorableText(value: unknown, path = ""): string | undefined {
  if (typeof value === "string") {
    const problem = textProblem(value);
    return problem ? `${path || "value"}: ${problem}` : undefined;
  }
  if (value === null || typeof value !== "object") return undefined;
  // One frame per object or array being walked: its keys (null for an array) and the next index.
  const frames: { value: Record<string, unknown>; keys: string[] | null; next: number }[] = [];
  const enter = (v: object) => {
    const keys = Array.isArray(v) ? null : Object.keys(v);
    frames.push({ value: v as Record<string, unknown>, keys, next: 0 });
  };
  const pathHere = (): string => {
    const tail = jsonPath(frames.map((f) => (f.keys ? f.keys[f.next - 1]! : f.next - 1)));
    return path && tail ? (tail.startsWith("[") ? path + tail : `${path}.${tail}`) : path || tail;
  };
  enter(value);
  while (frames.length > 0) {
    const f = frames[frames.length - 1]!;
    if (f.next >= (f.keys ? f.keys.length : (f.value as unknown as unknown[]).length)) {
      frames.pop();
      continue;
    }
    const key = f.keys ? f.keys[f.next]! : f.next;
    f.next++;
    if (typeof key === "string") {
      const problem = textProblem(key);
      if (problem) return `key of ${pathHere()}: ${problem}`;
    }
    const child = f.value[key];
    if (typeof child === "string") {
      const problem = textProblem(child);
      if (problem) return `${pathHere()}: ${problem}`;
    } else if (child !== null && typeof child === "object") enter(child);
  }
  return undefined;
}

// In JSON text a NUL can only come from a \u0000 escape and a lone surrogate
// only from a \uD800-\uDFFF escape (raw control characters are not JSON, and
// UTF-8 cannot encode surrogates).
const UNSTORABLE_ESCAPE = /\\u(?:0000|[dD][89a-fA-F])/;

/**
 * unstorableText of a value parsed from valid UTF-8 JSON `text`: the walk only
 * runs when the text holds an escape that can make such a string (the walk
 * costs several times JSON.parse; the scan of the text a fraction of it).
 */
export const unstorableJson = (text: string, value: unknown): string | undefined =>
  UNSTORABLE_ESCAPE.test(text) ? unstorableText(value) : undefined;

function textProblem(text: string): string | undefined {
  if (text.includes("\u0000")) return "contains a NUL character";
  if (LONE_SURROGATE.test(text)) return "contains a lone surrogate (not valid Unicode)";
  return undefined;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: a NUL is what it looks for
const UNSTORABLE = /\u0000|\p{Cs}/gu;

/**
 * The text with every NUL and lone surrogate written as a \uXXXX escape, so
 * that PostgreSQL can store it (reasons quoting a message's keys or values).
 */
export const escapeUnstorable = (text: string): string =>
  text.replace(UNSTORABLE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);

function jsonPath(parts: (string | number)[]): string {
  return parts.reduce<string>(
    (acc, p) => (typeof p === "number" ? `${acc}[${p}]` : acc ? `${acc}.${p}` : p),
    "",
  );
}
