// Public API of the build-settings validator ([tool.scikit-build]).
export { type BuildContext, hostContext, isTruthy } from "./context.js";
export type { Diagnostic, DiagnosticCode, Severity } from "./diagnostics.js";
export { formatDiagnostic } from "./diagnostics.js";
export {
  DocumentParseError,
  decodeDocument,
  type InputFormat,
  loadDocument,
  parseDocument,
  type SettingsDocument,
} from "./document.js";
export {
  type EvaluationResult,
  evaluate,
  evaluateDocument,
  type OverrideOutcome,
} from "./evaluate.js";
export { chooseGeneration, type Generation, LINE_RELEASE, lineOf, type SettingsLine } from "./lines.js";
export { schemaFor, settingsSchema } from "./schema.js";
export type * from "./types.js";
export { BUILD_STATES } from "./types.js";
export { type ValidateOptions, type ValidationResult, validate, validateDocument } from "./validate.js";
export { SPEC_BACKEND_VERSION } from "./versioning.js";
