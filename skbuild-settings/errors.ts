// ajv's errors translated into Diagnostics a person can act on: the dotted path, what was
// expected, and "did you mean" suggestions for misspelled keys and enum values.
import type { ErrorObject } from "ajv";
import {
  type Diagnostic,
  describeTypes,
  describeValue,
  formatPath,
  type PathSegment,
  parsePointer,
} from "./diagnostics.js";
import type { SettingsLine } from "./lines.js";
import { schemaFor } from "./schema.js";
import { closeMatches } from "./suggest.js";

/** Every known key path of the schema, for "did you mean" across sections (verbose -> build.verbose). */
const keyIndexes = new Map<SettingsLine, Map<string, string[]>>();
function knownKeyPaths(line: SettingsLine): Map<string, string[]> {
  const cached = keyIndexes.get(line);
  if (cached) return cached;
  const keyIndex = new Map<string, string[]>();
  keyIndexes.set(line, keyIndex);
  const props = schemaFor(line).properties as Record<string, Record<string, unknown>>;
  const add = (key: string, path: string) => {
    const list = keyIndex.get(key) ?? [];
    list.push(path);
    keyIndex.set(key, list);
  };
  for (const [top, sub] of Object.entries(props)) {
    add(top, top);
    const subProps = sub.properties as Record<string, unknown> | undefined;
    if (!subProps || top === "metadata") continue;
    for (const [key, schema] of Object.entries(subProps)) {
      if (!(schema as Record<string, unknown>).deprecated) add(key, `${top}.${key}`);
    }
  }
  return keyIndex;
}

/** Resolves a local $ref of our schema ("#/definitions/if"). */
function resolveRef(schema: Record<string, unknown>, line: SettingsLine): Record<string, unknown> {
  const ref = schema.$ref;
  if (typeof ref !== "string" || !ref.startsWith("#/")) return schema;
  let node: unknown = schemaFor(line);
  for (const part of ref.slice(2).split("/")) node = (node as Record<string, unknown>)[part];
  return node as Record<string, unknown>;
}

export interface TranslateOptions {
  prefix: string;
  /** strict-config: unknown keys and override-only keys are errors (true) or warnings (false). */
  strict: boolean;
  line: SettingsLine;
}

function unknownKey(
  err: ErrorObject,
  segments: PathSegment[],
  key: string,
  opts: TranslateOptions,
): Diagnostic {
  const path = formatPath(opts.prefix, [...segments, key]);
  const parent = resolveRef((err.parentSchema ?? {}) as Record<string, unknown>, opts.line);
  const siblings = Object.keys((parent.properties as Record<string, unknown>) ?? {});
  let suggestions = closeMatches(key, siblings).map((s) => formatPath(opts.prefix, [...segments, s]));
  const inOverride = segments[0] === "overrides" && typeof segments[1] === "number";
  const depth = inOverride ? 2 : 0;
  if (!suggestions.length && segments.length <= depth + 1) {
    // A key that exists elsewhere in the schema (top-level `verbose` -> build.verbose).
    const base = segments.slice(0, depth);
    const elsewhere = knownKeyPaths(opts.line).get(key) ?? [];
    suggestions = elsewhere.map((p) => formatPath(opts.prefix, [...base, ...p.split(".")]));
  }
  const inIf = segments.includes("if");
  const rel = segments.slice(depth).filter((s) => typeof s === "string");
  const dottedKey = [...rel, key].join(".");
  let what = inIf ? "unknown override condition" : "unknown option";
  if (opts.line === "0.12" && NEWER_KEYS.has(inIf ? `if.${key}` : dottedKey))
    what +=
      ' (a scikit-build-core 1.x setting: set minimum-version = "1.0" or higher, or pass --backend-version 1.1)';
  return {
    severity: opts.strict || inIf ? "error" : "warning",
    code: "unknown-key",
    path,
    message: opts.strict || inIf ? what : `${what} (ignored because strict-config is false)`,
    ...(suggestions.length ? { suggestions } : {}),
  };
}

/**
 * Keys that newer scikit-build-core releases accept but the specified 0.12 schema does not
 * (docs/spec-rules.md#build-settings-schema).
 */
const NEWER_KEYS = new Set([
  "env",
  "config-setting",
  "if.not",
  "if.config-setting",
  "cmake.fresh",

  "cmake.fresh",
  "sdist.force-include",
  "wheel.force-include",
  "wheel.reproducible",
  "install.targets",
  "editable.rebuild-dir",
  "variant",
  "variant-name",
  "variant-label",
  "null-variant",
]);

function minPropertiesMessage(segments: PathSegment[]): string {
  const last = segments[segments.length - 1];
  if (typeof last === "number" && segments[segments.length - 2] === "overrides")
    return "an override needs `if` and at least one setting to change";
  if (last === "if" || last === "any") return "expected at least one condition";
  if (last === "env") return "expected at least one environment variable";
  return "expected at least one entry";
}

/** Turns ajv errors into Diagnostics, one per problem. */
export function translateErrors(errors: ErrorObject[], data: unknown, opts: TranslateOptions): Diagnostic[] {
  const out: Diagnostic[] = [];
  const seen = new Set<string>();
  for (const err of errors) {
    const segments = parsePointer(err.instancePath, data);
    if (err.keyword === "if" || err.propertyName !== undefined) continue; // reported by the inner error
    if (err.schemaPath.includes("/oneOf/")) continue; // generate: summarised by the oneOf error
    const d = diagnosticOf(err, segments, opts);
    const key = `${d.code}|${d.path}|${d.message}`;
    if (!seen.has(key)) {
      seen.add(key);
      out.push(d);
    }
  }
  return out;
}

/** The Diagnostic of one ajv error, by its keyword. */
function diagnosticOf(err: ErrorObject, segments: PathSegment[], opts: TranslateOptions): Diagnostic {
  const path = formatPath(opts.prefix, segments);
  const value = err.data;
  if (err.schemaPath.includes("/dependencies/any/")) {
    return {
      severity: "error",
      code: "if-any-exclusive",
      path: formatPath(opts.prefix, [...segments, "any"]),
      message:
        "`any` must be the only key of `if`: move the other conditions into `any` or into another override",
    };
  }
  switch (err.keyword) {
    case "additionalProperties":
      return unknownKey(err, segments, String(err.params.additionalProperty), opts);
    case "type":
      return typeMismatch(err, path, value);
    case "enum":
      return notInEnum(err, path, value);
    case "required": {
      const missing = String(err.params.missingProperty);
      const inOverride = segments[0] === "overrides" && segments.length === 2;
      return {
        severity: "error",
        code: "required",
        path: formatPath(opts.prefix, [...segments, missing]),
        message: inOverride ? "every override needs an `if` table of conditions" : "missing required key",
      };
    }
    case "minLength":
      return { severity: "error", code: "empty", path, message: "must not be empty" };
    case "minProperties":
      return { severity: "error", code: "override-shape", path, message: minPropertiesMessage(segments) };
    case "propertyNames":
      return {
        severity: "error",
        code: "empty",
        path: formatPath(opts.prefix, [...segments, String(err.params.propertyName)]),
        message: "names must not be empty",
      };
    case "pattern":
      return {
        severity: "error",
        code: "pattern",
        path,
        message: `expected a wheel tag of the form <interpreter>-<abi>-<platform> (e.g. "cp312-abi3-linux_x86_64"), got ${describeValue(value)}`,
      };
    case "oneOf": {
      const item = (value ?? {}) as Record<string, unknown>;
      const both = "template" in item && "template-path" in item;
      return {
        severity: "error",
        code: "generate-template",
        path,
        message: both
          ? "set either `template` or `template-path`, not both"
          : "expected `template` (inline) or `template-path` (a file) besides `path`",
      };
    }
    case "overrideOnly":
      return {
        severity: opts.strict ? "error" : "warning",
        code: "override-only",
        path,
        message:
          "is not allowed to be hard-coded here; it may only be set inside [[tool.scikit-build.overrides]] (or by config settings)",
      };
    case "pep440Specifier": {
      const hint = err.params.suggestions as string[] | undefined;
      return {
        severity: "error",
        code: "specifier",
        path,
        message: err.message ?? "invalid specifier",
        ...(hint ? { suggestions: hint.map((h) => JSON.stringify(h)) } : {}),
      };
    }
    case "pep440Version":
      return { severity: "error", code: "version", path, message: err.message ?? "invalid version" };
    case "pythonRegex":
      return {
        severity: "error",
        code: "regex",
        path,
        message: err.message ?? "invalid regular expression",
      };
    default:
      return { severity: "error", code: "invalid", path, message: err.message ?? err.keyword };
  }
}

function typeMismatch(err: ErrorObject, path: string, value: unknown): Diagnostic {
  const types = Array.isArray(err.params.type) ? err.params.type : String(err.params.type).split(",");
  const expected = err.schemaPath.includes("/define-value/else")
    ? "a string, a boolean, an array of strings or a table {env = ..., default = ...}"
    : describeTypes(types);
  return {
    severity: "error",
    code: "type",
    path,
    message: `expected ${expected}, got ${describeValue(value)}`,
  };
}

function notInEnum(err: ErrorObject, path: string, value: unknown): Diagnostic {
  const allowed = (err.params.allowedValues as unknown[]).map((v) => JSON.stringify(v));
  const suggestions =
    typeof value === "string"
      ? closeMatches(value, (err.params.allowedValues as string[]).map(String), 3, 0.5)
      : [];
  return {
    severity: "error",
    code: "enum",
    path,
    message: `expected one of ${allowed.join(", ")}, got ${describeValue(value)}`,
    ...(suggestions.length ? { suggestions: suggestions.map((s) => JSON.stringify(s)) } : {}),
  };
}
