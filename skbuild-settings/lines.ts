// The two generations of the settings the validator knows, and how a document picks one.
// scikit-build-core changes its settings surface at 1.0 (new keys, condition kinds, errors for
// deprecated keys), so the 0.12 line (the specified one, docs/spec-rules.md#build-settings-schema) and the
// current 1.x line are checked apart.
import { isVersion, versionLessThan } from "./pep440.js";

export type SettingsLine = "0.12" | "1.x";

/** The upstream release each line follows (and the one the differential test runs). */
export const LINE_RELEASE: Record<SettingsLine, string> = { "0.12": "0.12.2", "1.x": "1.1.2" };

export const SETTINGS_LINES: readonly SettingsLine[] = ["0.12", "1.x"];

/** The line a backend version belongs to. */
export function lineOf(version: string): SettingsLine {
  return isVersion(version) && !versionLessThan(version, "1.0") ? "1.x" : "0.12";
}

export interface Generation {
  line: SettingsLine;
  /** The backend version the rules follow (the `scikit-build-version` condition tests it). */
  backendVersion: string;
  /** The version was given (flag or option), not chosen from minimum-version. */
  explicit: boolean;
}

/**
 * Picks the generation: an explicit backend version wins; otherwise a minimum-version of 1.0 or
 * more means a 1.x backend (0.12 would refuse to build), and anything else the specified 0.12 line.
 */
export function chooseGeneration(
  backendVersion: string | undefined,
  minimumVersion: string | undefined,
): Generation {
  if (backendVersion !== undefined) return { line: lineOf(backendVersion), backendVersion, explicit: true };
  const line = minimumVersion !== undefined ? lineOf(minimumVersion) : "0.12";
  return { line, backendVersion: LINE_RELEASE[line], explicit: false };
}
