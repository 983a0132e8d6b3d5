// Matching an override's `if` against a build context.
import type { BuildContext } from "./context.js";
import { backendTruthy, isTruthy } from "./context.js";
import { satisfies } from "./pep440.js";
import { regexSearch } from "./pyregex.js";
import { CONDITION_KINDS, type ConditionKey } from "./schema.js";
import { SPEC_BACKEND_VERSION } from "./versioning.js";

type Table = Record<string, unknown>;
const isTable = (v: unknown): v is Table => typeof v === "object" && v !== null && !Array.isArray(v);

export interface MatchOutcome {
  matched: boolean;
  /** Conditions that could not match because the context lacks the fact (key of the context). */
  missing: { condition: string; fact: keyof BuildContext }[];
}

const FACT: Record<ConditionKey, keyof BuildContext> = {
  "backend-version": "backendVersion",
  "scikit-build-version": "backendVersion",
  "python-version": "pythonVersion",
  "implementation-name": "implementationName",
  "implementation-version": "implementationVersion",
  "platform-system": "platformSystem",
  "platform-machine": "platformMachine",
  "platform-node": "platformNode",
  state: "state",
  "from-sdist": "fromSdist",
  failed: "failed",
  "system-cmake": "systemCmake",
  "cmake-wheel": "cmakeWheel",
  "abi-flags": "abiFlags",
  env: "env",
  "config-setting": "configSettings",
};

/** The context value of a fact, with the defaults that are facts rather than guesses. */
function fact(ctx: BuildContext, key: keyof BuildContext): unknown {
  const v = ctx[key];
  if (v !== undefined) return v;
  if (key === "backendVersion") return SPEC_BACKEND_VERSION;
  if (key === "fromSdist" || key === "failed") return false;
  if (key === "env" || key === "configSettings") return {};
  return undefined;
}

/** One condition: true, false, or undefined when the context lacks the fact. */
export function matchCondition(key: ConditionKey, expected: unknown, ctx: BuildContext): boolean | undefined {
  const kind = CONDITION_KINDS[key];
  const value = fact(ctx, FACT[key]);
  if (value === undefined) return undefined;
  switch (kind) {
    case "specifier": {
      const versions = Array.isArray(value) ? value : [value];
      return versions.some((v) => satisfies(String(v), String(expected)));
    }
    case "regex":
      return regexSearch(String(expected), String(value));
    case "bool":
      return value === expected;
    case "config-setting": {
      const values = value as Record<string, string | boolean | undefined>;
      return Object.entries(expected as Table).every(([name, want]) => {
        const got = values[name];
        if (typeof want === "boolean")
          return (typeof got === "boolean" ? got : backendTruthy(got ?? "")) === want;
        if (got === undefined) return false;
        return regexSearch(String(want), typeof got === "boolean" ? String(got) : got);
      });
    }
    case "env": {
      const env = value as Record<string, string | undefined>;
      return Object.entries(expected as Table).every(([name, want]) => {
        const got = env[name];
        if (typeof want === "boolean") return isTruthy(got) === want;
        return got !== undefined && regexSearch(String(want), got);
      });
    }
  }
}

function evalTable(
  table: Table,
  ctx: BuildContext,
  mode: "all" | "any",
  out: MatchOutcome["missing"],
  path: string,
) {
  const missing: MatchOutcome["missing"] = [];
  let anyTrue = false;
  let anyFalse = false;
  for (const [key, expected] of Object.entries(table)) {
    if (key === "any" || key === "not" || !(key in CONDITION_KINDS)) continue;
    const r = matchCondition(key as ConditionKey, expected, ctx);
    if (r === undefined) missing.push({ condition: `${path}.${key}`, fact: FACT[key as ConditionKey] });
    else if (r) anyTrue = true;
    else anyFalse = true;
  }
  const matched = mode === "all" ? !anyFalse && missing.length === 0 : anyTrue;
  // Unknown facts matter only when they decide the outcome (no known condition already does).
  if (!(mode === "all" ? anyFalse : anyTrue)) out.push(...missing);
  return matched;
}

/**
 * Does an `if` table match? Plain conditions must all match; conditions under `any` need one
 * match; conditions under `not` (1.x) must all fail; each group present must pass.
 */
export function matchIf(cond: unknown, ctx: BuildContext, path = "if"): MatchOutcome {
  const missing: MatchOutcome["missing"] = [];
  if (!isTable(cond)) return { matched: false, missing };
  const plainKeys = Object.keys(cond).filter((k) => k !== "any" && k !== "not");
  let matched = plainKeys.length ? evalTable(cond, ctx, "all", missing, path) : true;
  if (isTable(cond.any)) matched = evalTable(cond.any, ctx, "any", missing, `${path}.any`) && matched;
  if (isTable(cond.not)) matched = !evalTable(cond.not, ctx, "any", missing, `${path}.not`) && matched;
  if (!plainKeys.length && !isTable(cond.any) && !isTable(cond.not)) matched = false;
  return { matched, missing };
}

/** Does the `if` test `failed = true` (so that a failed build is retried)? */
export function testsFailed(cond: unknown): boolean {
  if (!isTable(cond)) return false;
  return cond.failed === true || (isTable(cond.any) && cond.any.failed === true);
}
