// validate(): schema (ajv) + semantic rules + minimum-version rules, as one list of diagnostics.
import { schemaValidator, translateErrors } from "./compile.js";
import type { Diagnostic } from "./diagnostics.js";
import type { SettingsDocument } from "./document.js";
import { checkSemantics } from "./rules.js";
import type { Settings } from "./types.js";
import { checkVersionedKeys, resolveMinimumVersion, SPEC_BACKEND_VERSION } from "./versioning.js";

export interface ValidateOptions {
  /** [build-system] requires, used by minimum-version = "build-system.requires". */
  buildSystemRequires?: readonly string[];
  /** The backend version the rules follow (default SPEC_BACKEND_VERSION). From 1.0 on, deprecated keys are errors unless minimum-version is older. */
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
}

type Table = Record<string, unknown>;
const isTable = (v: unknown): v is Table => typeof v === "object" && v !== null && !Array.isArray(v);

function result(diagnostics: Diagnostic[], settings: unknown, minimumVersion?: string): ValidationResult {
  const errors = diagnostics.filter((d) => d.severity === "error");
  const warnings = diagnostics.filter((d) => d.severity === "warning");
  const valid = errors.length === 0;
  return {
    valid,
    errors,
    warnings,
    ...(valid ? { settings: settings as Settings } : {}),
    ...(minimumVersion !== undefined ? { minimumVersion } : {}),
  };
}

/** Validates a [tool.scikit-build] settings object (already parsed). */
export function validate(settings: unknown, options: ValidateOptions = {}): ValidationResult {
  const prefix = options.pathPrefix ?? "tool.scikit-build";
  const backendVersion = options.backendVersion ?? SPEC_BACKEND_VERSION;
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
    );
  }
  const diagnostics: Diagnostic[] = [];
  const check = schemaValidator();
  if (!check(data)) {
    diagnostics.push(
      ...translateErrors(check.errors ?? [], data, { prefix, strict: data["strict-config"] !== false }),
    );
  }
  const minimum = resolveMinimumVersion(data, options.buildSystemRequires, prefix);
  diagnostics.push(...minimum.diagnostics);
  const versionOpts = { prefix, minimumVersion: minimum.version, backendVersion } as const;
  diagnostics.push(...checkVersionedKeys(data, { ...versionOpts, base: [] }));
  diagnostics.push(...checkSemantics(data, { prefix, base: [], root: data }));
  if (Array.isArray(data.overrides)) {
    data.overrides.forEach((override, i) => {
      if (!isTable(override)) return;
      const base = ["overrides", i];
      diagnostics.push(...checkVersionedKeys(override, { ...versionOpts, base }));
      diagnostics.push(...checkSemantics(override, { prefix, base, root: data }));
    });
  }
  return result(diagnostics, data, minimum.version);
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
