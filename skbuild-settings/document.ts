// Reading a settings document: a pyproject.toml (the [tool.scikit-build] table and
// [build-system] requires), or JSON holding either the settings object itself or a whole
// pyproject-shaped object ({"tool": {"scikit-build": ...}}).
import { readFileSync } from "node:fs";
import { parse as parseToml, TomlError } from "smol-toml";

export type InputFormat = "toml" | "json";

export interface SettingsDocument {
  /** Where it came from (a file name, or "<stdin>"). */
  source: string;
  format: InputFormat;
  /** True when the document is pyproject-shaped: settings live under tool.scikit-build. */
  pyproject: boolean;
  /** The [tool.scikit-build] table (undefined when the pyproject has none). */
  settings: unknown;
  /** [build-system] requires, when present. */
  buildSystemRequires?: string[];
}

/** A document that cannot be parsed at all (malformed TOML or JSON). */
export class DocumentParseError extends Error {
  constructor(
    readonly source: string,
    readonly format: InputFormat,
    detail: string,
    readonly line?: number,
    readonly column?: number,
  ) {
    super(
      `${source}: malformed ${format.toUpperCase()}${line ? ` at line ${line}, column ${column}` : ""}: ${detail}`,
    );
    this.name = "DocumentParseError";
  }
}

/** "toml" for *.toml, "json" for *.json, else guessed from the first non-blank character. */
export function detectFormat(source: string, text: string): InputFormat {
  if (/\.toml$/i.test(source)) return "toml";
  if (/\.json$/i.test(source)) return "json";
  const first = text.trimStart()[0];
  return first === "{" ? "json" : "toml";
}

/** Is this prefix of a JSON text still a possible beginning of a valid document? */
function validPrefix(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch (err) {
    const message = (err as Error).message;
    const at = /position (\d+)/.exec(message);
    if (at) return Number(at[1]) >= text.length; // "Expected ..." at the very end: just incomplete
    return /Unexpected end of JSON input/.test(message);
  }
}

function lineColumn(text: string, offset: number): { line: number; column: number } {
  const lines = text.slice(0, offset).split("\n");
  return { line: lines.length, column: lines[lines.length - 1]!.length + 1 };
}

/**
 * Line and column of a JSON syntax error. Node 20's messages do not always carry a position,
 * so find the shortest prefix that can no longer become valid JSON (a binary search: valid
 * prefixes are closed under shortening); its last character is the culprit.
 */
function jsonPosition(text: string, message: string): { line?: number; column?: number } {
  const at = /position (\d+)/.exec(message);
  if (at) return lineColumn(text, Number(at[1]));
  if (validPrefix(text)) return lineColumn(text, text.length); // ends too early
  let lo = 0; // validPrefix(text.slice(0, lo)) is true
  let hi = text.length; // ... is false
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (validPrefix(text.slice(0, mid))) lo = mid;
    else hi = mid;
  }
  return lineColumn(text, hi - 1);
}

function parseText(text: string, source: string, format: InputFormat): unknown {
  if (format === "toml") {
    try {
      return parseToml(text);
    } catch (err) {
      if (err instanceof TomlError) {
        const detail = err.message.split("\n")[0]!.replace(/^Invalid TOML document: /, "");
        throw new DocumentParseError(source, format, detail, err.line, err.column);
      }
      throw err;
    }
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    const message = (err as Error).message;
    const pos = jsonPosition(text, message);
    throw new DocumentParseError(
      source,
      format,
      message
        .replace(/ in JSON at position \d+.*$/, "")
        .replace(/, (\.\.\.)?"[\s\S]*" is not valid JSON$/, ""),
      pos.line,
      pos.column,
    );
  }
}

const isTable = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Date);

/**
 * The text of a document's bytes: strict UTF-8 without a byte order mark, as TOML requires
 * (and as the backend reads pyproject.toml). Throws DocumentParseError otherwise.
 */
export function decodeDocument(bytes: Uint8Array, source = "<input>", format?: InputFormat): string {
  const fmt = format ?? (/\.json$/i.test(source) ? "json" : "toml");
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf)
    throw new DocumentParseError(
      source,
      fmt,
      "starts with a UTF-8 byte order mark, which TOML does not allow",
      1,
      1,
    );
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    const text = new TextDecoder("utf-8").decode(bytes);
    const at = text.indexOf("\ufffd");
    const pos = at >= 0 ? lineColumn(text, at) : { line: undefined, column: undefined };
    throw new DocumentParseError(source, fmt, "not valid UTF-8", pos.line, pos.column);
  }
}

/** Parses a document from text. Throws DocumentParseError for malformed input. */
export function parseDocument(text: string, source = "<input>", format?: InputFormat): SettingsDocument {
  const fmt = format ?? detectFormat(source, text);
  const data = parseText(text, source, fmt);
  const pyproject = fmt === "toml" || (isTable(data) && "tool" in data);
  if (!pyproject) return { source, format: fmt, pyproject: false, settings: data };
  const root = isTable(data) ? data : {};
  if (root.tool !== undefined && !isTable(root.tool))
    throw new DocumentParseError(source, fmt, "`tool` must be a table ([tool] or tool = {...})");
  const tool = isTable(root.tool) ? root.tool : undefined;
  const buildSystem = isTable(root["build-system"]) ? root["build-system"] : undefined;
  const requires = buildSystem?.requires;
  return {
    source,
    format: fmt,
    pyproject: true,
    settings: tool?.["scikit-build"],
    ...(Array.isArray(requires)
      ? { buildSystemRequires: requires.filter((r) => typeof r === "string") }
      : {}),
  };
}

/** Reads and parses a file. Throws DocumentParseError for malformed input, and the fs error when unreadable. */
export function loadDocument(file: string, format?: InputFormat): SettingsDocument {
  return parseDocument(decodeDocument(readFileSync(file), file, format), file, format);
}
