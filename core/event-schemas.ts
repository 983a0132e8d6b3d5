import { Ajv2020, type ErrorObject } from "ajv/dist/2020.js";
import type { RegExpEngine } from "ajv/dist/types/index.js";
import addFormatsModule from "ajv-formats";
import { RE2JS } from "re2js";
import { describeError, under } from "../common/schema-errors.js";
import { nestingDepth } from "./start-limits.js";

// The event catalog's JSON Schemas (one per event type, optional): checked when a
// type is written, compiled once per version by each process that validates
// payloads. Schemas come from API callers, so compiling and running one is bounded:
// - dialect 2020-12 only (the one the API's own schemas use); `$schema` naming another is refused;
// - no remote `$ref`: a reference the schema itself does not hold is refused, never fetched;
// - `pattern` and `patternProperties` run on RE2 (re2js: linear time, no backtracking), so a
//   pattern cannot stall the consumer on a crafted payload; look-arounds and
//   backreferences, which RE2 lacks, are refused when the type is written;
// - unknown keywords are refused (strict schema mode): a misspelt `requried` would
//   otherwise be ignored, checking less than its author meant without a word;
// - formats (date-time, email, uuid, ...) are checked, by ajv-formats.

export const SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema";
/** Largest schema, as JSON. */
export const MAX_SCHEMA_BYTES = 128 * 1024;
/** Deepest nesting of a schema: far beyond hand-written schemas, well inside ajv's recursion. */
export const MAX_SCHEMA_DEPTH = 64;

/** A schema that cannot be used: the message names the place (`schema.properties.amount.type ...`). */
export class InvalidSchema extends Error {}

/** A compiled schema: the first problem of a payload, as a sentence naming its path, or undefined. */
export type PayloadCheck = (payload: unknown) => string | undefined;

// ajv-formats is CommonJS: its default export arrives wrapped under ESM.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ??
  addFormatsModule) as unknown as (ajv: Ajv2020) => Ajv2020;

const re2: RegExpEngine = Object.assign((pattern: string) => RE2JS.compile(pattern), {
  code: "RE2JS.compile",
});

const OPTIONS = {
  allErrors: false,
  verbose: true,
  strictSchema: true,
  strictTypes: false,
  strictTuples: false,
  strictRequired: false,
  allowUnionTypes: true,
  code: { regExp: re2 },
} as const;

/** Checks schemas against the 2020-12 meta-schema: compiled once, shared (it stores no schema). */
const metaChecker = new Ajv2020(OPTIONS);

/**
 * A fresh instance per compiled schema: schemas may carry `$id`s of their own, which
 * one shared instance would refuse the second time, and an instance keeps every schema
 * it compiled, which would hold every replaced version for the life of the process.
 * The meta-schema check is metaChecker's, done before.
 */
function newAjv(): Ajv2020 {
  const ajv = new Ajv2020({ ...OPTIONS, validateSchema: false });
  addFormats(ajv);
  return ajv;
}

/** Longest piece of a payload value quoted in an error (a message names the path, not the data). */
const QUOTED_CHARS = 100;
const clip = (v: unknown) =>
  typeof v === "string" && v.length > QUOTED_CHARS ? `${v.slice(0, QUOTED_CHARS)}…` : v;

const sentence = (prefix: string, root: string) => (e: ErrorObject) =>
  describeError({ ...under(prefix, e), data: clip(e.data) }, root);

/**
 * Checks that `schema` is a usable JSON Schema and compiles it. Throws InvalidSchema
 * naming what is wrong; `field` is how the caller calls the schema (`schema`).
 */
export function compileEventSchema(schema: unknown, field = "schema"): PayloadCheck {
  if (typeof schema !== "boolean" && (typeof schema !== "object" || schema === null || Array.isArray(schema)))
    throw new InvalidSchema(`${field} must be a JSON object or a boolean`);
  const bytes = Buffer.byteLength(JSON.stringify(schema));
  if (bytes > MAX_SCHEMA_BYTES)
    throw new InvalidSchema(`${field} is ${bytes} bytes as JSON; at most ${MAX_SCHEMA_BYTES}`);
  const depth = nestingDepth(schema);
  if (depth > MAX_SCHEMA_DEPTH)
    throw new InvalidSchema(`${field} nests ${depth} levels deep; at most ${MAX_SCHEMA_DEPTH}`);
  const dialect = typeof schema === "object" ? (schema as { $schema?: unknown }).$schema : undefined;
  if (dialect !== undefined && dialect !== SCHEMA_DIALECT && dialect !== `${SCHEMA_DIALECT}#`)
    throw new InvalidSchema(
      `${field}.$schema must be ${SCHEMA_DIALECT} (the dialect the catalog validates with) or absent, got ${JSON.stringify(dialect)}`,
    );
  if (!metaChecker.validateSchema(schema))
    throw new InvalidSchema(
      `${field} is not a valid JSON Schema: ${sentence(`/${field}`, field)(metaChecker.errors![0]!)}`,
    );
  const ajv = newAjv();
  let validate: ReturnType<Ajv2020["compile"]>;
  try {
    validate = ajv.compile(schema as object);
  } catch (err) {
    // Unknown keywords, unresolvable $refs, patterns RE2 cannot run, ...
    throw new InvalidSchema(`${field} cannot be compiled: ${(err as Error).message}`);
  }
  const describe = sentence("/payload", "payload");
  return (payload) => (validate(payload) ? undefined : describe(validate.errors![0]!));
}
