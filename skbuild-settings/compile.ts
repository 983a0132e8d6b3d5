// The schema compiled once with ajv, with our keywords (override-only, PEP 440, regex).
import { Ajv, type ErrorObject, type SchemaValidateFunction, type ValidateFunction } from "ajv";
import { describeValue } from "./diagnostics.js";
import type { SettingsLine } from "./lines.js";
import { isSpecifierSet, isVersion } from "./pep440.js";
import { compilePythonRegex } from "./pyregex.js";
import { schemaFor } from "./schema.js";

type KeywordOptions = boolean | { also?: string[] };

function keywordError(keyword: string, message: string, suggestions?: string[]): ErrorObject {
  // ajv fills in instancePath and schemaPath of errors returned by a keyword.
  return { keyword, message, params: suggestions ? { suggestions } : {} } as unknown as ErrorObject;
}

/** A bare version where a specifier set is expected ("3.12"): suggest "==3.12" and ">=3.12". */
const specifierHint = (v: string) => (isVersion(v) ? [`==${v.trim()}`, `>=${v.trim()}`] : undefined);

function stringKeyword(
  keyword: string,
  check: (value: string, also: string[]) => string | undefined,
  hint?: (value: string) => string[] | undefined,
): SchemaValidateFunction {
  const fn: SchemaValidateFunction = (schema: KeywordOptions, data: unknown) => {
    if (schema === false || typeof data !== "string") return true;
    const also = typeof schema === "object" ? (schema.also ?? []) : [];
    if (also.includes(data)) return true;
    const problem = check(data, also);
    if (problem === undefined) return true;
    fn.errors = [keywordError(keyword, problem, hint?.(data))];
    return false;
  };
  return fn;
}

const orAlso = (also: string[]) =>
  also.length ? ` (or ${also.map((a) => JSON.stringify(a)).join(", ")})` : "";

function createAjv(): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    verbose: true,
    strict: true,
    strictTypes: false,
    strictRequired: false,
  });
  ajv.addKeyword({
    keyword: "pep440Specifier",
    schemaType: ["boolean", "object"],
    errors: true,
    validate: stringKeyword(
      "pep440Specifier",
      (v, also) =>
        isSpecifierSet(v)
          ? undefined
          : `expected a PEP 440 specifier set such as ">=3.15" or ">=3.10,<3.13"${orAlso(also)}, got ${describeValue(v)}`,
      specifierHint,
    ),
  });
  ajv.addKeyword({
    keyword: "pep440Version",
    schemaType: ["boolean", "object"],
    errors: true,
    validate: stringKeyword("pep440Version", (v, also) =>
      isVersion(v)
        ? undefined
        : `expected a PEP 440 version such as "0.10" or "3.26.1"${orAlso(also)}, got ${describeValue(v)}`,
    ),
  });
  ajv.addKeyword({
    keyword: "pythonRegex",
    schemaType: "boolean",
    errors: true,
    validate: stringKeyword("pythonRegex", (v) => {
      const { error } = compilePythonRegex(v);
      return error === undefined ? undefined : `invalid regular expression ${JSON.stringify(v)}: ${error}`;
    }),
  });
  // Override-only keys are valid only somewhere under /overrides/<n>/.
  const overrideOnly: SchemaValidateFunction = (schema: boolean, _data: unknown, _parent, cxt) => {
    if (!schema || !cxt) return true;
    return /^\/overrides\/\d+\//.test(cxt.instancePath);
  };
  ajv.addKeyword({ keyword: "overrideOnly", schemaType: "boolean", validate: overrideOnly });
  return ajv;
}

const compiled = new Map<SettingsLine, ValidateFunction>();

/** The compiled validator of a line (compiled on first use, then reused). */
export function schemaValidator(line: SettingsLine = "0.12"): ValidateFunction {
  let fn = compiled.get(line);
  if (!fn) {
    fn = createAjv().compile(schemaFor(line));
    compiled.set(line, fn);
  }
  return fn;
}
