// minimum-version: resolving it (including "build-system.requires"), and the rules it selects
// for deprecated and newer keys (docs/spec-rules.md#deprecations-and-minimum-version).
import { type Diagnostic, formatPath, type PathSegment } from "./diagnostics.js";
import type { SettingsLine } from "./lines.js";
import { isVersion, minVersion, versionLessThan } from "./pep440.js";

/**
 * The backend version whose settings surface is specified (scikit-build-core 0.12, see
 * docs/spec-rules.md#build-settings-schema:
 * toolchain-file, python-hints, wheel.tags, sdist.inclusion-mode; no 1.0-only keys). It is the
 * default of `backendVersion` and of the `backend-version` override condition.
 */
export const SPEC_BACKEND_VERSION = "0.12";

/** A key that moved: allowed before `since`, replaced by `to` from `since` on. */
interface Move {
  from: [string, string];
  to: [string, string];
  since: string;
}

export const MOVES: readonly Move[] = [
  { from: ["cmake", "minimum-version"], to: ["cmake", "version"], since: "0.8" },
  { from: ["ninja", "minimum-version"], to: ["ninja", "version"], since: "0.8" },
  { from: ["cmake", "verbose"], to: ["build", "verbose"], since: "0.10" },
  { from: ["cmake", "targets"], to: ["build", "targets"], since: "0.10" },
];

/** Keys (or one value of a key) that exist only from some version on; `line` limits a rule to one line. */
const INTRODUCED: readonly { key: [string, string]; since: string; value?: string; line?: SettingsLine }[] = [
  { key: ["sdist", "inclusion-mode"], since: "0.12" },
  { key: ["sdist", "inclusion-mode"], since: "1.0", value: "explicit" },
  { key: ["sdist", "resolve-symlinks"], since: "1.0", line: "1.x" },
  { key: ["sdist", "resolve-symlinks"], since: "1.1", value: "error", line: "1.x" },
];

const get = (table: unknown, [a, b]: readonly [string, string]): unknown => {
  if (!table || typeof table !== "object") return undefined;
  const section = (table as Record<string, unknown>)[a];
  return section && typeof section === "object" && !Array.isArray(section)
    ? (section as Record<string, unknown>)[b]
    : undefined;
};

const dotted = (k: readonly string[]) => k.join(".");

/**
 * The lowest scikit-build-core version allowed by [build-system] requires, if it has a lower
 * bound: the smallest version named by `>=`, `>`, `==` or `~=` across its requirements, as
 * the backend reads it (`===` pins are arbitrary strings, not lower bounds).
 */
export function minimumFromRequires(requires: readonly string[]): string | undefined {
  const key = requires.join("\u0000");
  if (requiresCache.has(key)) return requiresCache.get(key);
  const found = lowerBound(requires);
  if (requiresCache.size >= 1000) requiresCache.clear();
  requiresCache.set(key, found);
  return found;
}

const requiresCache = new Map<string, string | undefined>();

function lowerBound(requires: readonly string[]): string | undefined {
  const bounds: string[] = [];
  for (const req of requires) {
    const m = /^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(.*)$/.exec(req);
    if (!m || m[1]!.toLowerCase().replace(/[-_.]+/g, "-") !== "scikit-build-core") continue;
    const spec = m[2]!.split(";")[0]!.replace(/[()]/g, "");
    for (const clause of spec.split(",")) {
      const c = /^\s*(===|==|~=|>=|>)\s*([^\s,*]+?)(\.\*)?\s*$/.exec(clause);
      if (c && c[1] !== "===" && isVersion(c[2]!)) bounds.push(c[2]!);
    }
  }
  return minVersion(bounds);
}

export interface ResolvedMinimum {
  /** The effective minimum-version, undefined when unset (meaning: the latest behaviour). */
  version?: string;
  diagnostics: Diagnostic[];
}

/** Resolves the top-level minimum-version of a settings table. */
export function resolveMinimumVersion(
  settings: Record<string, unknown>,
  buildSystemRequires: readonly string[] | undefined,
  prefix: string,
): ResolvedMinimum {
  const raw = settings["minimum-version"];
  if (typeof raw !== "string") return { diagnostics: [] };
  if (raw === "build-system.requires") {
    const found = buildSystemRequires ? minimumFromRequires(buildSystemRequires) : undefined;
    if (found) return { version: found, diagnostics: [] };
    return {
      diagnostics: [
        {
          severity: "error",
          code: "minimum-version",
          path: formatPath(prefix, ["minimum-version"]),
          message: buildSystemRequires
            ? '"build-system.requires" needs a lower bound on scikit-build-core in [build-system] requires, e.g. "scikit-build-core>=0.10"'
            : '"build-system.requires" needs a pyproject.toml with a [build-system] requires entry for scikit-build-core',
        },
      ],
    };
  }
  return isVersion(raw) ? { version: raw, diagnostics: [] } : { diagnostics: [] }; // bad versions: schema error
}

export interface VersionRuleOptions {
  prefix: string;
  /** Segments of the table being checked: [] for the settings, ["overrides", n] for an override. */
  base: PathSegment[];
  minimumVersion?: string;
  backendVersion: string;
  line: SettingsLine;
}

/**
 * Deprecated and newer keys against minimum-version:
 * - old key with minimum-version below the deprecation version: allowed (backward compatibility);
 * - old key with minimum-version at or above it: error naming the replacement;
 * - old key with minimum-version unset: warning (backend < 1.0) or error (backend >= 1.0, as
 *   scikit-build-core 1.0 does);
 * - old and new key together: error;
 * - new key with minimum-version below the version that introduced it: error.
 */
export function checkVersionedKeys(table: unknown, opts: VersionRuleOptions): Diagnostic[] {
  const out: Diagnostic[] = [];
  const m = opts.minimumVersion;
  const at = (k: readonly string[]) => formatPath(opts.prefix, [...opts.base, ...k]);
  const unsetIsError = !versionLessThan(opts.backendVersion, "1.0");
  for (const move of MOVES) {
    const hasOld = get(table, move.from) !== undefined;
    const hasNew = get(table, move.to) !== undefined;
    if (hasOld && hasNew) {
      out.push({
        severity: "error",
        code: "deprecated",
        path: at(move.from),
        message: `cannot set both ${dotted(move.from)} and ${dotted(move.to)}; use ${dotted(move.to)} only`,
      });
      continue;
    }
    if (hasOld) {
      if (m !== undefined && versionLessThan(m, move.since)) continue;
      const error = m !== undefined || unsetIsError;
      const why =
        m !== undefined
          ? `not allowed with minimum-version ${m}`
          : unsetIsError
            ? `not allowed by backend ${opts.backendVersion} when minimum-version is unset`
            : "still accepted because minimum-version is unset";
      out.push({
        severity: error ? "error" : "warning",
        code: "deprecated",
        path: at(move.from),
        message: `deprecated since ${move.since} (${why}); use ${dotted(move.to)} instead${
          move.from[1] === "minimum-version" ? ' (a specifier such as ">=3.21")' : ""
        }`,
      });
    }
    if (hasNew && m !== undefined && versionLessThan(m, move.since)) {
      out.push({
        severity: "error",
        code: "introduced",
        path: at(move.to),
        message: `introduced in ${move.since} but minimum-version is ${m}; raise minimum-version to ${move.since} or use ${dotted(move.from)}`,
      });
    }
  }
  for (const intro of INTRODUCED) {
    if (intro.line !== undefined && intro.line !== opts.line) continue;
    const value = get(table, intro.key);
    if (value === undefined || (intro.value !== undefined && value !== intro.value)) continue;
    if (m !== undefined && versionLessThan(m, intro.since)) {
      const what = intro.value !== undefined ? `${JSON.stringify(intro.value)} was introduced` : "introduced";
      out.push({
        severity: "error",
        code: "introduced",
        path: at(intro.key),
        message: `${what} in ${intro.since} but minimum-version is ${m}; raise minimum-version to at least ${intro.since}`,
      });
    }
  }
  return out;
}

/** Rewrites deprecated keys of a (merged) settings table onto their replacements, in place. */
export function applyMoves(settings: Record<string, unknown>): void {
  for (const move of MOVES) {
    const old = get(settings, move.from);
    if (old === undefined) continue;
    const from = settings[move.from[0]] as Record<string, unknown>;
    delete from[move.from[1]];
    if (get(settings, move.to) !== undefined) continue;
    if (settings[move.to[0]] === undefined) settings[move.to[0]] = {};
    const section = settings[move.to[0]] as Record<string, unknown>;
    section[move.to[1]] = move.from[1] === "minimum-version" ? `>=${String(old)}` : old;
  }
}
