// Semantic rules the schema cannot express (besides minimum-version rules in versioning.ts).
import { type Diagnostic, formatPath, type PathSegment } from "./diagnostics.js";
import type { SettingsLine } from "./lines.js";
import { versionLessThan } from "./pep440.js";
import { compilePythonRegex } from "./pyregex.js";
import { BUILD_STATES } from "./types.js";

type Table = Record<string, unknown>;
const isTable = (v: unknown): v is Table => typeof v === "object" && v !== null && !Array.isArray(v);

export interface RuleContext {
  prefix: string;
  /** Segments of the table being checked: [] for the settings, ["overrides", n] for an override. */
  base: PathSegment[];
  /** The settings themselves (for values an override inherits, e.g. experimental, build-dir). */
  root: Table;
  line: SettingsLine;
  minimumVersion?: string;
}

const at = (ctx: RuleContext, ...segs: PathSegment[]) => formatPath(ctx.prefix, [...ctx.base, ...segs]);

/** metadata.<field>: a provider is required; providers outside scikit-build-core need experimental. */
function metadataRules(table: Table, ctx: RuleContext): Diagnostic[] {
  const out: Diagnostic[] = [];
  const metadata = table.metadata;
  if (!isTable(metadata)) return out;
  const experimental = (table.experimental ?? ctx.root.experimental) === true;
  for (const [field, entry] of Object.entries(metadata)) {
    if (!isTable(entry)) continue;
    const provider = entry.provider;
    if (provider === undefined) {
      out.push({
        severity: "error",
        code: "metadata-provider",
        path: at(ctx, "metadata", field, "provider"),
        message:
          'a dynamic metadata entry needs a provider, e.g. provider = "scikit_build_core.metadata.regex"',
      });
      continue;
    }
    if (typeof provider !== "string") continue; // schema error
    const external = !provider.startsWith("scikit_build_core.") || entry["provider-path"] !== undefined;
    if (external && !experimental) {
      out.push({
        severity: "error",
        code: "metadata-provider",
        path: at(ctx, "metadata", field, "provider"),
        message: `provider ${JSON.stringify(provider)} is not part of scikit-build-core; set experimental = true to use third-party or local providers`,
      });
    }
  }
  return out;
}

/**
 * What is wrong with the editable settings of a table (settings after overrides, or one table
 * alone), as [key, message] pairs. 0.12: rebuild needs build-dir and cannot go with inplace.
 * 1.x: a persistent install (rebuild or rebuild-dir) needs build-dir unless inplace, where the
 * source tree is the build tree and only rebuild-dir is refused.
 */
export function editableProblems(
  editable: unknown,
  buildDir: unknown,
  line: SettingsLine,
): [string, string][] {
  if (!isTable(editable)) return [];
  const hasBuildDir = typeof buildDir === "string" && buildDir !== "";
  const inplace = editable.mode === "inplace";
  if (line === "0.12") {
    if (editable.rebuild !== true) return [];
    if (inplace)
      return [["rebuild", 'editable.rebuild = true cannot be combined with editable.mode = "inplace"']];
    return hasBuildDir ? [] : [["rebuild", "editable.rebuild = true needs build-dir to be set"]];
  }
  const rebuildDir = typeof editable["rebuild-dir"] === "string" && editable["rebuild-dir"] !== "";
  if (inplace)
    return rebuildDir
      ? [["rebuild-dir", 'editable.rebuild-dir cannot be combined with editable.mode = "inplace"']]
      : [];
  if ((editable.rebuild === true || rebuildDir) && !hasBuildDir)
    return [
      [
        rebuildDir ? "rebuild-dir" : "rebuild",
        `editable.${rebuildDir ? "rebuild-dir" : "rebuild = true"} needs build-dir to be set`,
      ],
    ];
  return [];
}

/** Does some override set a key (so a static rule on it may be decided by the build context)? */
const overridesSet = (root: Table, key: string, sub?: string) =>
  Array.isArray(root.overrides) &&
  root.overrides.some(
    (o) =>
      isTable(o) &&
      (sub === undefined ? o[key] !== undefined : isTable(o[key]) && (o[key] as Table)[sub] !== undefined),
  );

/**
 * Editable rules on one table. In the settings they are errors unless an override sets
 * build-dir or editable (then the build context decides: warning, and evaluate checks the
 * merged result); in an override body always warnings, since other overrides may complete it.
 */
function editableRules(table: Table, ctx: RuleContext): Diagnostic[] {
  const inOverride = ctx.base.length > 0;
  const editable =
    inOverride && isTable(ctx.root.editable) && isTable(table.editable)
      ? { ...ctx.root.editable, ...table.editable }
      : table.editable;
  const problems = editableProblems(editable, table["build-dir"] ?? ctx.root["build-dir"], ctx.line);
  const contextual = inOverride || overridesSet(ctx.root, "build-dir") || overridesSet(ctx.root, "editable");
  return problems.map(([key, message]) => ({
    severity: contextual ? "warning" : "error",
    code: "editable-rebuild",
    path: at(ctx, "editable", key),
    message: contextual ? `${message} (unless a matching override completes it)` : message,
  }));
}

/** if.config-setting (1.1) may only test settings declared in tool.scikit-build.config-setting. */
function configSettingRules(table: Table, ctx: RuleContext): Diagnostic[] {
  const out: Diagnostic[] = [];
  const declared = isTable(ctx.root["config-setting"]) ? ctx.root["config-setting"] : {};
  if (ctx.base.length === 0) {
    if (
      isTable(table["config-setting"]) &&
      ctx.minimumVersion !== undefined &&
      versionLessThan(ctx.minimumVersion, "1.1")
    )
      out.push({
        severity: "error",
        code: "introduced",
        path: at(ctx, "config-setting"),
        message: `introduced in 1.1 but minimum-version is ${ctx.minimumVersion}; raise minimum-version to at least 1.1`,
      });
    return out;
  }
  const cond = isTable(table.if) ? table.if : {};
  for (const [segs, t] of [
    [["if"], cond],
    [["if", "any"], cond.any],
    [["if", "not"], cond.not],
  ] as const) {
    const tested = isTable(t) && isTable(t["config-setting"]) ? t["config-setting"] : {};
    for (const name of Object.keys(tested)) {
      if (name in declared) continue;
      out.push({
        severity: "error",
        code: "unknown-key",
        path: at(ctx, ...segs, "config-setting", name),
        message: "tests a config-setting that tool.scikit-build.config-setting does not declare",
      });
    }
  }
  return out;
}

const lastComponent = (p: string) =>
  p
    .replace(/[/\\]+$/, "")
    .split(/[/\\]/)
    .pop() ?? "";

/** wheel.packages as a table: each source path must end in the same name as its wheel path. */
function wheelPackagesRules(table: Table, ctx: RuleContext): Diagnostic[] {
  const wheel = table.wheel;
  if (!isTable(wheel) || !isTable(wheel.packages)) return [];
  const out: Diagnostic[] = [];
  for (const [target, source] of Object.entries(wheel.packages)) {
    if (typeof source !== "string") continue;
    if (lastComponent(target) !== lastComponent(source)) {
      out.push({
        severity: "error",
        code: "wheel-packages",
        path: at(ctx, "wheel", "packages", target),
        message: `the last path component must match: ${JSON.stringify(target)} vs ${JSON.stringify(source)}`,
      });
    }
  }
  return out;
}

/** Override-specific rules: unused inherit entries, state regexes that can never match. */
function overrideRules(override: Table, ctx: RuleContext): Diagnostic[] {
  const out: Diagnostic[] = [];
  if (isTable(override.inherit)) {
    for (const [section, entries] of Object.entries(override.inherit)) {
      if (!isTable(entries)) continue;
      for (const [key, mode] of Object.entries(entries)) {
        const set = isTable(override[section]) && (override[section] as Table)[key] !== undefined;
        if (!set && mode !== "none") {
          out.push({
            severity: "warning",
            code: "inherit-unused",
            path: at(ctx, "inherit", section, key),
            message: `has no effect: this override does not set ${section}.${key}`,
          });
        }
      }
    }
  }
  const cond = isTable(override.if) ? override.if : undefined;
  for (const [table, segs] of [
    [cond, ["if"]],
    [isTable(cond?.any) ? cond.any : undefined, ["if", "any"]],
  ] as const) {
    const state = table?.state;
    if (typeof state !== "string") continue;
    const { regex } = compilePythonRegex(state);
    if (regex && !BUILD_STATES.some((s) => regex.test(s))) {
      out.push({
        severity: "warning",
        code: "state-never-matches",
        path: at(ctx, ...segs, "state"),
        message: `matches none of the build states ${BUILD_STATES.join(", ")}`,
      });
    }
  }
  return out;
}

/** All semantic rules for one table (the settings, or one override with ctx.base = ["overrides", n]). */
export function checkSemantics(table: Table, ctx: RuleContext): Diagnostic[] {
  const out = [
    ...metadataRules(table, ctx),
    ...editableRules(table, ctx),
    ...wheelPackagesRules(table, ctx),
    ...(ctx.line === "1.x" ? configSettingRules(table, ctx) : []),
  ];
  if (ctx.base.length) out.push(...overrideRules(table, ctx));
  return out;
}
