// Semantic rules the schema cannot express (besides minimum-version rules in versioning.ts).
import { type Diagnostic, formatPath, type PathSegment } from "./diagnostics.js";
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

/** editable.rebuild needs build-dir. */
function editableRules(table: Table, ctx: RuleContext): Diagnostic[] {
  const editable = table.editable;
  if (!isTable(editable) || editable.rebuild !== true) return [];
  const buildDir = table["build-dir"] ?? ctx.root["build-dir"];
  if (typeof buildDir === "string" && buildDir !== "") return [];
  const inOverride = ctx.base.length > 0;
  return [
    {
      severity: inOverride ? "warning" : "error",
      code: "editable-rebuild",
      path: at(ctx, "editable", "rebuild"),
      message: `editable.rebuild = true needs build-dir to be set${inOverride ? " (unless another override sets it)" : ""}`,
    },
  ];
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
  const out = [...metadataRules(table, ctx), ...editableRules(table, ctx), ...wheelPackagesRules(table, ctx)];
  if (ctx.base.length) out.push(...overrideRules(table, ctx));
  return out;
}
