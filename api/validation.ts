import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import type { RequestHandler } from "express";
import { describeError } from "../common/schema-errors.js";
import { validation } from "./errors.js";
import { openapi } from "./openapi.js";

// Request validation compiled from the OpenAPI document's schemas. Messages
// name the field (dotted path) and say what was expected.

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const ajv = new Ajv2020({ allErrors: false, verbose: true, strict: false, validateFormats: false });
ajv.addSchema({ $id: "openapi", components: openapi.components });

const compiled = new Map<string, ValidateFunction>();
function validator(schema: string): ValidateFunction {
  let v = compiled.get(schema);
  if (!v) {
    v = ajv.compile({ $ref: `openapi#/components/schemas/${schema}` });
    compiled.set(schema, v);
  }
  return v;
}

/** Throws a VALIDATION error naming the first problem of `value` against a component schema. */
export function check<T>(schema: string, value: unknown): T {
  const validate = validator(schema);
  if (!validate(value)) throw validation(describeError(validate.errors![0]!));
  return value as T;
}

const hasBody = (headers: Record<string, unknown>) =>
  Number(headers["content-length"] ?? 0) > 0 || headers["transfer-encoding"] !== undefined;

/**
 * Bodies must be JSON (`application/json`, any charset parameter). A request
 * that must carry a body and has none is refused; an optional one may be absent.
 */
export function jsonBody(opts: { required: boolean }): RequestHandler {
  return (req, _res, next) => {
    if (!hasBody(req.headers)) {
      if (opts.required) throw validation("request body must not be empty");
      req.body = undefined;
      return next();
    }
    if (!req.is("application/json")) {
      throw validation(`Content-Type must be application/json, got ${req.headers["content-type"] ?? "none"}`);
    }
    next();
  };
}

/** Only the named query parameters, each at most once. */
export function allowQuery(...names: string[]): RequestHandler {
  return (req, _res, next) => {
    for (const [key, value] of Object.entries(req.query)) {
      if (!names.includes(key)) {
        throw validation(
          `unknown query parameter "${key}"${names.length ? `; accepted: ${names.join(", ")}` : ""}`,
        );
      }
      if (typeof value !== "string") throw validation(`query parameter "${key}" must be given once`);
    }
    next();
  };
}
