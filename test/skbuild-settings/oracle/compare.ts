// Our reader on the same case as upstream's, and the comparison of the two: the verdict
// (accepted or refused) and, when both accept, the effective values a build uses.
import {
  type BuildContext,
  DocumentParseError,
  decodeDocument,
  type EvaluationResult,
  evaluateDocument,
  parseDocument,
} from "../../../skbuild-settings/index.js";
import type { Case } from "./cases.js";
import { explain, type Ours } from "./differences.js";
import type { OracleAnswer, OracleFacts } from "./upstream.js";

/** Effective values compared when both readers accept (dotted paths into the settings). */
export const COMPARED_PATHS = [
  "cmake.define",
  "cmake.args",
  "cmake.build-type",
  "cmake.source-dir",
  "build.targets",
  "build.verbose",
  "build.tool-args",
  "build.requires",
  "build-dir",
  "sdist.include",
  "sdist.exclude",
  "sdist.inclusion-mode",
  "sdist.reproducible",
  "sdist.cmake",
  "wheel.packages",
  "wheel.exclude",
  "wheel.py-api",
  "wheel.install-dir",
  "wheel.build-tag",
  "install.components",
  "editable.mode",
  "editable.rebuild",
  "logging.level",
  "messages.after-failure",
  "messages.after-success",
  "experimental",
  "strict-config",
  "minimum-version",
  "ninja.make-fallback",
] as const;

export function contextFor(c: Case, facts: OracleFacts, release: string): BuildContext {
  return {
    backendVersion: release,
    pythonVersion: facts.python_version,
    implementationName: facts.implementation_name,
    implementationVersion: facts.implementation_version,
    platformSystem: facts.platform_system,
    platformMachine: facts.platform_machine,
    platformNode: facts.platform_node,
    abiFlags: facts.abi_flags,
    state: c.context.state,
    fromSdist: c.context.fromSdist,
    failed: c.context.retry,
    systemCmake: c.context.systemCmake,
    cmakeWheel: facts.cmake_wheel,
    env: c.context.env,
  };
}

/** Reads a case as the backend would, with our code. */
export function readWithOurs(c: Case, facts: OracleFacts, release: string): Ours {
  let result: EvaluationResult;
  let settings: unknown;
  const context = contextFor(c, facts, release);
  try {
    const doc = parseDocument(decodeDocument(c.toml, "pyproject.toml"), "pyproject.toml");
    settings = doc.settings;
    result = evaluateDocument(doc, context);
  } catch (err) {
    if (err instanceof DocumentParseError) return { accepted: false, errors: [err.message] };
    throw err;
  }
  const accepted = result.valid;
  return { accepted, result, settings, context, errors: result.errors.map((e) => `${e.path}: ${e.message}`) };
}

const dig = (obj: unknown, dotted: string): unknown => {
  let node = obj;
  for (const part of dotted.split(".")) {
    if (typeof node !== "object" || node === null) return undefined;
    node = (node as Record<string, unknown>)[part];
  }
  return node;
};

/** null (upstream's None) and absent are the same; everything else compares as JSON. */
const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

export interface Comparison {
  id: string;
  agree: boolean;
  /** When they differ: the intended difference (an id of the README table) that explains it. */
  intended?: string;
  detail?: string;
}

export function compare(c: Case, ours: Ours, theirs: OracleAnswer, line: "0.12" | "1.x"): Comparison {
  // A matching `fail = true` is compared as the `fail` value (the build stops on it; reading succeeds).
  let detail: string | undefined;
  if (ours.accepted !== theirs.ok) {
    detail = theirs.ok
      ? `ours refused (${ours.errors.slice(0, 3).join("; ")}), upstream accepted`
      : `ours accepted, upstream refused (${theirs.error.split("\n").slice(-3).join(" | ")})`;
  } else if (theirs.ok && ours.result?.effective) {
    if (ours.result.fail !== (theirs.settings.fail === true))
      detail = `fail: ours ${ours.result.fail}, upstream ${theirs.settings.fail}`;
    const diffs = COMPARED_PATHS.filter((p) => {
      const upstream = dig(theirs.settings, p);
      return (
        !same(dig(ours.result!.effective, p), upstream) &&
        !(p === "minimum-version" && upstream === undefined)
      );
    });
    if (diffs.length)
      detail =
        (detail ? `${detail}; ` : "") +
        diffs
          .map(
            (p) =>
              `${p}: ours ${JSON.stringify(dig(ours.result!.effective, p))}, upstream ${JSON.stringify(dig(theirs.settings, p))}`,
          )
          .join("; ");
  }
  if (detail === undefined) return { id: c.id, agree: true };
  const intended = explain(c, ours, theirs, line);
  return { id: c.id, agree: false, detail, ...(intended ? { intended } : {}) };
}
