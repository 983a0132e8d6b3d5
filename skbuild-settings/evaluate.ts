// evaluate(): validate, decide which overrides match a build context, apply them in order, and
// return the effective settings with defaults, plus `fail` and retry information.

import { deepClone } from "./clone.js";
import { matchIf, testsFailed } from "./conditions.js";
import { type BuildContext, backendTruthy } from "./context.js";
import { fillDefaults } from "./defaults.js";
import type { Diagnostic } from "./diagnostics.js";
import { formatPath } from "./diagnostics.js";
import type { SettingsDocument } from "./document.js";
import { applyOverride } from "./merge.js";
import { isVersion, versionLessThan } from "./pep440.js";
import { editableProblems } from "./rules.js";
import type { EffectiveSettings } from "./types.js";
import { type ValidateOptions, type ValidationResult, validate, validateDocument } from "./validate.js";
import { applyMoves, resolveMinimumVersion } from "./versioning.js";

export interface OverrideOutcome {
  index: number;
  /** Dotted path, e.g. "tool.scikit-build.overrides[2]". */
  path: string;
  matched: boolean;
  /** The override sets fail = true. */
  fail: boolean;
}

export interface EvaluationResult extends ValidationResult {
  /** Effective settings (undefined when validation failed). */
  effective?: EffectiveSettings;
  overrides: OverrideOutcome[];
  /** Indexes of the overrides that matched, in order of application. */
  matched: number[];
  /** A matching override sets fail = true: the build stops at once. */
  fail: boolean;
  /** Overrides with fail = true that matched. */
  failOverrides: number[];
  /** If this build fails, it is retried: an override testing `failed = true` matches the retry. */
  retryOnFailure: boolean;
}

type Table = Record<string, unknown>;

/** The command-line flag that supplies each fact of the build context. */
const FLAG_OF: Partial<Record<keyof BuildContext, string>> = {
  pythonVersion: "--python",
  implementationName: "--implementation-name",
  implementationVersion: "--implementation-version",
  platformSystem: "--platform-system",
  platformMachine: "--platform-machine",
  platformNode: "--platform-node",
  state: "--state",
  systemCmake: "--system-cmake or --no-system-cmake",
  cmakeWheel: "--cmake-wheel or --no-cmake-wheel",
  abiFlags: "--abi-flags",
};

const isTable = (v: unknown): v is Table => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Values of the declared config-settings (1.1): the declared variable, else the `-C` value,
 * else the default; a bool setting reads strings as the backend does.
 */
function resolveConfigSettings(
  settings: Table,
  ctx: BuildContext,
): Record<string, string | boolean | undefined> {
  const out: Record<string, string | boolean | undefined> = {};
  const decls = isTable(settings["config-setting"]) ? settings["config-setting"] : {};
  for (const [name, decl] of Object.entries(decls)) {
    if (!isTable(decl)) continue;
    const env = typeof decl.env === "string" ? ctx.env?.[decl.env] : undefined;
    const raw = env ?? ctx.configSettingArgs?.[name];
    if (raw === undefined) out[name] = decl.default as string | boolean | undefined;
    else out[name] = decl.type === "bool" ? backendTruthy(raw) : raw;
  }
  return out;
}

function evaluateValid(
  settings: Table,
  validation: ValidationResult,
  context: BuildContext,
  prefix: string,
): EvaluationResult {
  const { line, backendVersion } = validation.generation;
  const ctx: BuildContext = {
    ...context,
    backendVersion,
    configSettings: context.configSettings ?? resolveConfigSettings(settings, context),
  };
  const warnings: Diagnostic[] = [...validation.warnings];
  const errors: Diagnostic[] = [];
  const merged = deepClone(settings);
  delete merged.overrides;
  const overrides = (Array.isArray(settings.overrides) ? settings.overrides : []) as Table[];
  const outcomes: OverrideOutcome[] = [];
  const retryCtx: BuildContext = { ...ctx, failed: true };
  let retryOnFailure = false;
  overrides.forEach((override, index) => {
    const path = formatPath(prefix, ["overrides", index]);
    const { matched, missing } = matchIf(override.if, ctx, `${path}.if`);
    if (matched)
      applyOverride(merged, override, (key, message) =>
        errors.push({ severity: "error", code: "inherit", path: `${path}.inherit.${key}`, message }),
      );
    else if (missing.length) {
      const names = [...new Set(missing.map((m) => m.condition.split(".").pop()!))];
      const flags = [...new Set(missing.map((m) => FLAG_OF[m.fact]).filter(Boolean))];
      warnings.push({
        severity: "warning",
        code: "context",
        path,
        message: `not applied: the build context does not say ${names.join(", ")} (give ${flags.join(", ")})`,
      });
    }
    outcomes.push({ index, path, matched, fail: matched && override.fail === true });
    if (testsFailed(override.if) && matchIf(override.if, retryCtx).matched) retryOnFailure = true;
  });
  // minimum-version may itself be overridden; resolve it on the merged table.
  const minimum = resolveMinimumVersion(merged, undefined, prefix).version ?? validation.minimumVersion;
  const backend = backendVersion;
  if (minimum !== undefined && isVersion(backend) && versionLessThan(backend, minimum)) {
    warnings.push({
      severity: "warning",
      code: "minimum-version",
      path: formatPath(prefix, ["minimum-version"]),
      message: `minimum-version ${minimum} is newer than backend version ${backend}; that backend would refuse to build`,
    });
  }
  // The editable rules hold for the settings this build gets, overrides applied.
  for (const [key, message] of editableProblems(merged.editable, merged["build-dir"], line)) {
    errors.push({
      severity: "error",
      code: "editable-rebuild",
      path: formatPath(prefix, ["editable", key]),
      message,
    });
  }
  if (errors.length)
    return invalid({ ...validation, valid: false, errors: [...validation.errors, ...errors], warnings });
  applyMoves(merged);
  const effective = fillDefaults(merged, { line, minimumVersion: minimum, env: ctx.env ?? {} });
  const failOverrides = outcomes.filter((o) => o.fail).map((o) => o.index);
  return {
    ...validation,
    warnings,
    effective,
    overrides: outcomes,
    matched: outcomes.filter((o) => o.matched).map((o) => o.index),
    fail: failOverrides.length > 0,
    failOverrides,
    retryOnFailure,
  };
}

function invalid(validation: ValidationResult): EvaluationResult {
  const { settings: _dropped, ...rest } = validation;
  return { ...rest, overrides: [], matched: [], fail: false, failOverrides: [], retryOnFailure: false };
}

/** Validates a settings object and evaluates it for a build context. */
export function evaluate(
  settings: unknown,
  context: BuildContext = {},
  options: ValidateOptions = {},
): EvaluationResult {
  const opts: ValidateOptions = {
    ...(context.backendVersion !== undefined ? { backendVersion: context.backendVersion } : {}),
    ...options,
  };
  const validation = validate(settings, opts);
  if (!validation.valid) return invalid(validation);
  return evaluateValid(
    (settings ?? {}) as Table,
    validation,
    context,
    opts.pathPrefix ?? "tool.scikit-build",
  );
}

/** evaluate() for a parsed document (uses its [build-system] requires for minimum-version). */
export function evaluateDocument(
  doc: SettingsDocument,
  context: BuildContext = {},
  options: ValidateOptions = {},
): EvaluationResult {
  const opts: ValidateOptions = {
    ...(context.backendVersion !== undefined ? { backendVersion: context.backendVersion } : {}),
    ...options,
  };
  const validation = validateDocument(doc, opts);
  if (!validation.valid) return invalid(validation);
  return evaluateValid(
    (doc.settings ?? {}) as Table,
    validation,
    context,
    opts.pathPrefix ?? "tool.scikit-build",
  );
}
