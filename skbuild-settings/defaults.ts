// Effective settings: every key of the schema in schema order, with the specified defaults filled
// in (docs/spec-rules.md#build-settings-schema) and cmake.define resolved to the strings CMake receives.
import { deepClone } from "./clone.js";
import { settingTruthy } from "./context.js";
import type { SettingsLine } from "./lines.js";
import { versionLessThan } from "./pep440.js";
import { schemaFor } from "./schema.js";
import type { DefineValue, EffectiveSettings } from "./types.js";

type Table = Record<string, unknown>;
type Schema = Record<string, unknown>;
const isTable = (v: unknown): v is Table => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * CMake's spelling of a define value; undefined drops the entry (variable unset, no default).
 * A list is one CMake list, so `;` inside an item is escaped. A set variable is used even when
 * empty; with a boolean default it is read as a boolean (false only for 0/false/off/no/"").
 */
export function resolveDefine(
  value: DefineValue,
  env: Record<string, string | undefined>,
): string | undefined {
  if (typeof value === "string") return value;
  if (typeof value === "boolean") return value ? "TRUE" : "FALSE";
  if (Array.isArray(value)) return value.map((item) => item.replaceAll(";", "\\;")).join(";");
  const fromEnv = env[value.env];
  if (fromEnv !== undefined) {
    return typeof value.default === "boolean" ? (settingTruthy(fromEnv) ? "TRUE" : "FALSE") : fromEnv;
  }
  return value.default === undefined ? undefined : resolveDefine(value.default, env);
}

interface SubPlan {
  key: string;
  default: unknown;
  /** Empty value for lists and tables without a default. */
  empty?: "array" | "table";
}

interface TopPlan {
  key: string;
  kind: "section" | "metadata" | "generate" | "scalar";
  default: unknown;
  subs: SubPlan[];
}

/** What to emit for a line, in schema order. Deprecated keys are left out (applyMoves moved them). */
const planFor = (line: SettingsLine): TopPlan[] =>
  Object.entries(schemaFor(line).properties as Record<string, Schema>)
    .filter(
      ([key, schema]) => key !== "overrides" && key !== "config-setting" && schema.overrideOnly !== true,
    )
    .map(([key, schema]) => {
      const kind =
        key === "metadata"
          ? "metadata"
          : key === "generate"
            ? "generate"
            : schema.type === "object"
              ? "section"
              : "scalar";
      const subs = Object.entries((schema.properties as Record<string, Schema>) ?? {})
        .filter(([, sub]) => sub.deprecated !== true)
        .map(([subKey, sub]) => ({
          key: subKey,
          default: sub.default,
          ...(sub.type === "array"
            ? { empty: "array" as const }
            : subKey === "define"
              ? { empty: "table" as const }
              : {}),
        }));
      return { key, kind, default: schema.default, subs };
    });

const PLANS: Record<SettingsLine, TopPlan[]> = { "0.12": planFor("0.12"), "1.x": planFor("1.x") };

function fillSection(plan: TopPlan, value: unknown, extra: Table | undefined): Table {
  const given = isTable(value) ? value : {};
  const out: Table = {};
  for (const sub of plan.subs) {
    const v = given[sub.key];
    if (v !== undefined) out[sub.key] = deepClone(v);
    else if (extra?.[sub.key] !== undefined) out[sub.key] = extra[sub.key];
    else if (sub.default !== undefined) out[sub.key] = sub.default;
    else if (sub.empty === "array") out[sub.key] = [];
    else if (sub.empty === "table") out[sub.key] = {};
  }
  return out;
}

export interface DefaultsOptions {
  line: SettingsLine;
  minimumVersion?: string;
  env: Record<string, string | undefined>;
}

/** Builds the effective settings from merged settings (overrides applied, deprecated keys moved). */
export function fillDefaults(merged: Table, opts: DefaultsOptions): EffectiveSettings {
  const out: Table = {};
  // Defaults that depend on minimum-version (reference: "Minimum version & defaults").
  const classic = opts.minimumVersion !== undefined && versionLessThan(opts.minimumVersion, "0.12");
  const extra: Record<string, Table> = { sdist: { "inclusion-mode": classic ? "classic" : "default" } };
  if (opts.line === "1.x") {
    const old = opts.minimumVersion !== undefined && versionLessThan(opts.minimumVersion, "1.0");
    extra.sdist!["resolve-symlinks"] = old ? "classic" : "all";
  }
  for (const plan of PLANS[opts.line]) {
    const value = merged[plan.key];
    if (plan.kind === "section") out[plan.key] = fillSection(plan, value, extra[plan.key]);
    else if (plan.kind === "metadata" || plan.key === "env")
      out[plan.key] = isTable(value) ? deepClone(value) : {};
    else if (plan.kind === "generate")
      out[plan.key] = Array.isArray(value)
        ? value.map((g) => ({ location: "install", ...(g as Table) }))
        : [];
    else if (value !== undefined) out[plan.key] = value;
    else if (plan.default !== undefined) out[plan.key] = plan.default;
  }
  if (opts.minimumVersion !== undefined) out["minimum-version"] = opts.minimumVersion; // resolved
  const cmake = out.cmake as Table;
  const define: Record<string, string> = {};
  for (const [name, v] of Object.entries((cmake.define as Record<string, DefineValue>) ?? {})) {
    const resolved = resolveDefine(v, opts.env);
    if (resolved !== undefined) define[name] = resolved;
  }
  cmake.define = define;
  return out as unknown as EffectiveSettings;
}
