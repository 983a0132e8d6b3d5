// The intended differences from scikit-build-core (the table in skbuild-settings/README.md, same ids),
// each with the test that recognises a case it explains. A difference no entry explains fails
// the differential test.
import { matchIf } from "../../../skbuild-settings/conditions.js";
import { backendTruthy, isTruthy } from "../../../skbuild-settings/context.js";
import type { BuildContext, EvaluationResult } from "../../../skbuild-settings/index.js";
import { CONDITION_KINDS } from "../../../skbuild-settings/schema.js";
import type { Case } from "./cases.js";
import type { OracleAnswer } from "./upstream.js";

type Line = "0.12" | "1.x";

/** What our reader made of a case (compare.ts reads it). */
export interface Ours {
  accepted: boolean;
  /** The [tool.scikit-build] table as parsed. */
  settings?: unknown;
  context?: BuildContext;
  result?: EvaluationResult;
  /** What refused the document: diagnostics, or the parse error. */
  errors: string[];
}

export interface IntendedDifference {
  id: string;
  /** Does this difference explain the disagreement on this case? */
  explains(c: Case, ours: Ours, theirs: OracleAnswer, line: Line): boolean;
}

type Table = Record<string, unknown>;
const isTable = (v: unknown): v is Table => typeof v === "object" && v !== null && !Array.isArray(v);
const errors = (ours: Ours) => ours.result?.errors ?? [];
/** Ours refused, upstream accepted, and every error of ours satisfies the test. */
const onlyOursRefuses = (ours: Ours, theirs: OracleAnswer, test: (code: string, path: string) => boolean) =>
  theirs.ok && !ours.accepted && errors(ours).length > 0 && errors(ours).every((e) => test(e.code, e.path));

export const INTENDED_DIFFERENCES: readonly IntendedDifference[] = [
  {
    // Upstream converts TOML values into the field's type without checking it (3 -> true,
    // ["x"] -> "['x']"); every option has a specified type (docs/spec-rules.md#build-settings-schema),
    // and we check it.
    id: "strict-types",
    explains: (_c, ours, theirs) => onlyOursRefuses(ours, theirs, (code) => code === "type"),
  },
  {
    // Upstream's runtime accepts `platform_system`; its schema (and validate-pyproject) does not.
    id: "underscore-conditions",
    explains: (_c, ours, theirs) =>
      onlyOursRefuses(ours, theirs, (code, path) => {
        const name = path.split(".").pop() ?? "";
        return (
          code === "unknown-key" && path.includes(".if.") && name.replaceAll("_", "-") in CONDITION_KINDS
        );
      }),
  },
  {
    // Upstream never looks inside an override that does not match (unknown keys, wrong types);
    // we check every override, since it will match on some other machine.
    id: "non-matching-overrides",
    explains: (_c, ours, theirs) => {
      const overrides =
        isTable(ours.settings) && Array.isArray(ours.settings.overrides) ? ours.settings.overrides : [];
      return onlyOursRefuses(ours, theirs, (_code, path) => {
        const m = /\.overrides\[(\d+)\]\.(?!if\b)/.exec(path);
        const override = m ? overrides[Number(m[1])] : undefined;
        return isTable(override) && !matchIf(override.if, ours.context ?? {}).matched;
      });
    },
  },
  {
    // The specified 0.12 settings list sdist.resolve-symlinks (boolean); 0.12.2 has no such key
    // (docs/spec-rules.md#build-settings-schema).
    id: "spec-resolve-symlinks",
    explains: (_c, ours, theirs, line) =>
      line === "0.12" &&
      ours.accepted &&
      !theirs.ok &&
      theirs.unrecognized.length > 0 &&
      theirs.unrecognized.every((k) => k === "tool.scikit-build.sdist.resolve-symlinks"),
  },
  {
    // `if.env.X = true/false`: the truthy values are specified (true, on, yes, y, t, a number above
    // 0: docs/spec-rules.md#truthy-environment-values); upstream takes any string that is not a false
    // word as true ("random", "-1").
    id: "env-condition-truthiness",
    explains: (_c, ours) => {
      const env = ours.context?.env ?? {};
      const overrides =
        isTable(ours.settings) && Array.isArray(ours.settings.overrides) ? ours.settings.overrides : [];
      const tables = overrides.flatMap((o) =>
        isTable(o) && isTable(o.if) ? [o.if, o.if.any, o.if.not] : [],
      );
      return tables.some(
        (t) =>
          isTable(t) &&
          isTable(t.env) &&
          Object.entries(t.env).some(
            ([name, want]) =>
              typeof want === "boolean" && isTruthy(env[name]) !== backendTruthy(env[name] ?? ""),
          ),
      );
    },
  },
  {
    // Upstream matches `cmake-wheel` whenever a CMake wheel is known, whatever boolean the
    // condition gives; we match the boolean (false: no wheel is known), as specified
    // (docs/spec-rules.md#cmake-wheel-condition).
    id: "cmake-wheel-false",
    explains: (_c, ours) => {
      const overrides =
        isTable(ours.settings) && Array.isArray(ours.settings.overrides) ? ours.settings.overrides : [];
      return overrides.some(
        (o) =>
          isTable(o) &&
          isTable(o.if) &&
          (o.if["cmake-wheel"] === false || (isTable(o.if.any) && o.if.any["cmake-wheel"] === false)),
      );
    },
  },
];

/** The id of the intended difference that explains a disagreement, if any. */
export function explain(c: Case, ours: Ours, theirs: OracleAnswer, line: Line): string | undefined {
  return INTENDED_DIFFERENCES.find((d) => d.explains(c, ours, theirs, line))?.id;
}
