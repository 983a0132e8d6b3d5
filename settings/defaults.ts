// Effective settings: every key of the schema in schema order, with the spec's defaults filled
// in and cmake.define resolved to the strings CMake receives.
import { isTruthy } from "./context.js";
import { versionLessThan } from "./pep440.js";
import { settingsSchema } from "./schema.js";
import type { DefineValue, EffectiveSettings } from "./types.js";

type Table = Record<string, unknown>;
type Schema = Record<string, unknown>;
const isTable = (v: unknown): v is Table => typeof v === "object" && v !== null && !Array.isArray(v);

/** CMake's spelling of a define value; undefined drops the entry (env unset and no default). */
export function resolveDefine(
  value: DefineValue,
  env: Record<string, string | undefined>,
): string | undefined {
  if (typeof value === "string") return value;
  if (typeof value === "boolean") return value ? "TRUE" : "FALSE";
  if (Array.isArray(value)) return value.join(";");
  const fromEnv = env[value.env];
  if (fromEnv !== undefined && fromEnv !== "") {
    return typeof value.default === "boolean" ? (isTruthy(fromEnv) ? "TRUE" : "FALSE") : fromEnv;
  }
  return value.default === undefined ? undefined : resolveDefine(value.default, env);
}

const SKIP_TOP = new Set(["overrides", "fail"]);

function fillSection(schema: Schema, value: unknown, extra: Table = {}): Table {
  const given = isTable(value) ? value : {};
  const out: Table = {};
  for (const [key, sub] of Object.entries((schema.properties as Record<string, Schema>) ?? {})) {
    if (given[key] !== undefined) out[key] = structuredClone(given[key]);
    else if (extra[key] !== undefined) out[key] = extra[key];
    else if (sub.default !== undefined) out[key] = sub.default;
    else if (sub.type === "array") out[key] = [];
    else if (key === "define") out[key] = {};
  }
  return out;
}

export interface DefaultsOptions {
  minimumVersion?: string;
  env: Record<string, string | undefined>;
}

/** Builds the effective settings from merged settings (overrides applied, deprecated keys moved). */
export function fillDefaults(merged: Table, opts: DefaultsOptions): EffectiveSettings {
  const out: Table = {};
  // Defaults that depend on minimum-version (reference: "Minimum version & defaults").
  const classic = opts.minimumVersion !== undefined && versionLessThan(opts.minimumVersion, "0.12");
  const extra: Record<string, Table> = { sdist: { "inclusion-mode": classic ? "classic" : "default" } };
  for (const [key, schema] of Object.entries(settingsSchema.properties as Record<string, Schema>)) {
    if (SKIP_TOP.has(key)) continue;
    const value = merged[key];
    if (key === "metadata") out[key] = isTable(value) ? structuredClone(value) : {};
    else if (key === "generate")
      out[key] = Array.isArray(value) ? value.map((g) => ({ location: "install", ...(g as Table) })) : [];
    else if (schema.type === "object") out[key] = fillSection(schema, value, extra[key]);
    else if (value !== undefined) out[key] = value;
    else if (schema.default !== undefined) out[key] = schema.default;
  }
  if (opts.minimumVersion !== undefined) out["minimum-version"] = opts.minimumVersion; // resolved
  const cmake = out.cmake as Table;
  const define: Record<string, string> = {};
  for (const [name, v] of Object.entries((cmake.define as Record<string, DefineValue>) ?? {})) {
    const resolved = resolveDefine(v, opts.env);
    if (resolved !== undefined) define[name] = resolved;
  }
  cmake.define = define;
  for (const old of ["minimum-version", "verbose", "targets"]) delete cmake[old];
  delete (out.ninja as Table)["minimum-version"];
  return out as unknown as EffectiveSettings;
}
