// What the validator reports: one Diagnostic per problem, with the dotted path of the setting
// (tool.scikit-build.cmake.verison), what was expected, and suggestions where we have them.

export type Severity = "error" | "warning";

export type DiagnosticCode =
  | "parse"
  | "not-a-table"
  | "unknown-key"
  | "type"
  | "enum"
  | "required"
  | "empty"
  | "pattern"
  | "override-only"
  | "override-shape"
  | "if-any-exclusive"
  | "generate-template"
  | "specifier"
  | "version"
  | "regex"
  | "deprecated"
  | "introduced"
  | "minimum-version"
  | "metadata-provider"
  | "editable-rebuild"
  | "wheel-packages"
  | "inherit-unused"
  | "state-never-matches"
  | "context"
  | "inherit"
  | "invalid";

export interface Diagnostic {
  severity: Severity;
  code: DiagnosticCode;
  /** Dotted path of the offending setting, e.g. "tool.scikit-build.overrides[1].if.python-version". */
  path: string;
  message: string;
  /** Full dotted paths (or values) the user may have meant. */
  suggestions?: string[];
}

/** Path segments: keys and array indexes. */
export type PathSegment = string | number;

const BARE = /^[A-Za-z0-9_-]+$/;

/** Formats path segments under a prefix: ["cmake", "define", "A.B"] -> tool.scikit-build.cmake.define."A.B". */
export function formatPath(prefix: string, segments: readonly PathSegment[]): string {
  let out = prefix;
  for (const seg of segments) {
    if (typeof seg === "number") out += `[${seg}]`;
    else out += (out ? "." : "") + (BARE.test(seg) ? seg : JSON.stringify(seg));
  }
  return out;
}

/** Splits an ajv instancePath ("/cmake/define/A~1B") into segments, with array indexes as numbers. */
export function parsePointer(pointer: string, data: unknown): PathSegment[] {
  if (!pointer) return [];
  const out: PathSegment[] = [];
  let node: unknown = data;
  for (const raw of pointer.slice(1).split("/")) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (Array.isArray(node)) {
      const i = Number(key);
      out.push(i);
      node = node[i];
    } else {
      out.push(key);
      node = node && typeof node === "object" ? (node as Record<string, unknown>)[key] : undefined;
    }
  }
  return out;
}

/** A short description of a value for messages: "a number (3)", "an array", "the string \"x\"". */
export function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  switch (typeof value) {
    case "string":
      return `the string ${JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value)}`;
    case "number":
    case "bigint":
      return `a number (${String(value)})`;
    case "boolean":
      return `a boolean (${value})`;
    case "object":
      return value instanceof Date ? "a date" : "a table";
    default:
      return typeof value;
  }
}

const TYPE_WORDS: Record<string, string> = {
  string: "a string",
  boolean: "a boolean",
  array: "an array",
  object: "a table",
  number: "a number",
  integer: "an integer",
  null: "null",
};

/** "a string, a boolean or an array" from JSON Schema type names. */
export function describeTypes(types: readonly string[]): string {
  const words = types.map((t) => TYPE_WORDS[t] ?? t);
  if (words.length <= 1) return words[0] ?? "";
  return `${words.slice(0, -1).join(", ")} or ${words[words.length - 1]}`;
}

/** One line of text: "error: <path>: <message> (did you mean: a, b?)". */
export function formatDiagnostic(d: Diagnostic): string {
  let line = `${d.severity}: ${d.path ? `${d.path}: ` : ""}${d.message}`;
  if (d.suggestions?.length) line += ` -> did you mean: ${d.suggestions.join(", ")}?`;
  return line;
}
