// validate(): schema (ajv) + semantic rules + minimum-version rules, as one list of diagnostics.
import { schemaValidator } from "./compile.js";
import { type Diagnostic, formatPath, type PathSegment } from "./diagnostics.js";
import type { SettingsDocument } from "./document.js";
import { translateErrors } from "./errors.js";
import { chooseGeneration, type Generation } from "./lines.js";
import { versionLessThan } from "./pep440.js";
import { checkSemantics } from "./rules.js";
import type { Settings } from "./types.js";
import { checkVersionedKeys, resolveMinimumVersion } from "./versioning.js";

export interface ValidateOptions {
  /** [build-system] requires, used by minimum-version = "build-system.requires". */
  buildSystemRequires?: readonly string[];
  /**
   * The backend version the rules follow. Unset: chosen from minimum-version (1.0 or more: the
   * 1.x line, else the specified 0.12 line; see lines.ts). From 1.0 on, deprecated keys are errors
   * unless minimum-version is older.
   */
  backendVersion?: string;
  /** Prefix of every path in diagnostics (default "tool.scikit-build"). */
  pathPrefix?: string;
}

export interface ValidationResult {
  /** No errors (warnings allowed). */
  valid: boolean;
  errors: Diagnostic[];
  warnings: Diagnostic[];
  /** The settings, typed, when valid. */
  settings?: Settings;
  /** minimum-version after resolving "build-system.requires" (undefined when unset). */
  minimumVersion?: string;
  /** The generation of the settings the document was checked against. */
  generation: Generation;
}

type Table = Record<string, unknown>;
const isTable = (v: unknown): v is Table => typeof v === "object" && v !== null && !Array.isArray(v);

/** Pre-order position of every path in the data, to list diagnostics in document order. */
function documentOrder(data: unknown, prefix: string): Map<string, number> {
  const order = new Map<string, number>();
  const walk = (node: unknown, segments: PathSegment[]) => {
    order.set(formatPath(prefix, segments), order.size);
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) walk(node[i], [...segments, i]);
    } else if (isTable(node)) for (const key of Object.keys(node)) walk(node[key], [...segments, key]);
  };
  walk(data, []);
  return order;
}

/** Drops the last segment of a formatted path: a.b -> a, a[2] -> a, a."x.y" -> a. */
const parentPath = (path: string) => path.replace(/(\.(?:"(?:[^"\\]|\\.)*"|[A-Za-z0-9_-]+)|\[\d+\])$/, "");

function sortByDocument(diagnostics: Diagnostic[], data: unknown, prefix: string): Diagnostic[] {
  if (diagnostics.length < 2) return diagnostics;
  const order = documentOrder(data, prefix);
  const rank = (path: string): number => {
    for (let p = path; ; ) {
      const hit = order.get(p);
      if (hit !== undefined) return hit + (p === path ? 0 : 0.5); // missing keys sort after their parent
      const up = parentPath(p);
      if (up === p) return -1;
      p = up;
    }
  };
  return diagnostics
    .map((d, i) => ({ d, i, r: rank(d.path) }))
    .sort((a, b) => a.r - b.r || a.i - b.i)
    .map((x) => x.d);
}

function result(
  unsorted: Diagnostic[],
  settings: unknown,
  generation: Generation,
  minimumVersion?: string,
  prefix = "tool.scikit-build",
): ValidationResult {
  const diagnostics = sortByDocument(unsorted, settings, prefix);
  const errors = diagnostics.filter((d) => d.severity === "error");
  const warnings = diagnostics.filter((d) => d.severity === "warning");
  const valid = errors.length === 0;
  return {
    valid,
    errors,
    warnings,
    ...(valid ? { settings: settings as Settings } : {}),
    ...(minimumVersion !== undefined ? { minimumVersion } : {}),
    generation,
  };
}

/** Validates a [tool.scikit-build] settings object (already parsed). */
export function validate(settings: unknown, options: ValidateOptions = {}): ValidationResult {
  const prefix = options.pathPrefix ?? "tool.scikit-build";
  const data = settings === undefined ? {} : settings;
  if (!isTable(data)) {
    return result(
      [
        {
          severity: "error",
          code: "not-a-table",
          path: prefix,
          message: `expected a table, got ${Array.isArray(data) ? "an array" : typeof data}`,
        },
      ],
      data,
      chooseGeneration(options.backendVersion, undefined),
    );
  }
  const diagnostics: Diagnostic[] = [];
  const minimum = resolveMinimumVersion(data, options.buildSystemRequires, prefix);
  diagnostics.push(...minimum.diagnostics);
  const generation = chooseGeneration(options.backendVersion, minimum.version);
  const { line, backendVersion } = generation;
  const check = schemaValidator(line);
  if (!check(data)) {
    diagnostics.push(
      ...translateErrors(check.errors ?? [], data, { prefix, strict: data["strict-config"] !== false, line }),
    );
  }
  if (
    generation.explicit &&
    minimum.version !== undefined &&
    versionLessThan(backendVersion, minimum.version)
  ) {
    diagnostics.push({
      severity: "error",
      code: "minimum-version",
      path: `${prefix}.minimum-version`,
      message: `minimum-version ${minimum.version} is newer than backend version ${backendVersion}; that backend refuses to build`,
    });
  }
  const versionOpts = { prefix, minimumVersion: minimum.version, backendVersion, line } as const;
  diagnostics.push(...checkVersionedKeys(data, { ...versionOpts, base: [] }));
  diagnostics.push(
    ...checkSemantics(data, { prefix, base: [], root: data, line, minimumVersion: minimum.version }),
  );
  if (Array.isArray(data.overrides)) {
    data.overrides.forEach((override, i) => {
      if (!isTable(override)) return;
      const base = ["overrides", i];
      diagnostics.push(...checkVersionedKeys(override, { ...versionOpts, base }));
      diagnostics.push(
        ...checkSemantics(override, { prefix, base, root: data, line, minimumVersion: minimum.version }),
      );
    });
  }
  return result(diagnostics, data, generation, minimum.version, prefix);
}

/** Validates a parsed document (a pyproject.toml or JSON file). */
export function validateDocument(doc: SettingsDocument, options: ValidateOptions = {}): ValidationResult {
  const opts: ValidateOptions = { ...options };
  if (doc.buildSystemRequires && !opts.buildSystemRequires)
    opts.buildSystemRequires = doc.buildSystemRequires;
  if (doc.pyproject && doc.settings === undefined) {
    const res = validate({}, opts);
    res.warnings.unshift({
      severity: "warning",
      code: "not-a-table",
      path: opts.pathPrefix ?? "tool.scikit-build",
      message: "no [tool.scikit-build] table in this document; nothing to check",
    });
    return res;
  }
  return validate(doc.settings, opts);
}
