import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import type { RequestHandler } from "express";
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

const fieldPath = (instancePath: string, child?: string): string => {
  const parts = instancePath
    .split("/")
    .slice(1)
    .map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"));
  if (child !== undefined) parts.push(child);
  return parts.reduce((acc, p) => (/^\d+$/.test(p) ? `${acc}[${p}]` : acc ? `${acc}.${p}` : p), "");
};

export function describeError(e: ErrorObject): string {
  const field = fieldPath(e.instancePath) || "body";
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case "additionalProperties":
      return `unknown field "${fieldPath(e.instancePath, String(p.additionalProperty))}"`;
    case "required":
      return `missing required field "${fieldPath(e.instancePath, String(p.missingProperty))}"`;
    case "type": {
      // A schema may allow several types ("object,null"): each is named.
      const types = String(p.type).split(",");
      return `${field} must be ${types.map((t) => (t === "object" ? "a JSON object" : t === "null" ? "null" : `of type ${t}`)).join(" or ")}`;
    }
    case "minItems":
      return p.limit === 1 ? `${field} must not be empty` : `${field} must have at least ${p.limit} items`;
    case "maxItems":
      return `${field} must have at most ${p.limit} items`;
    case "minLength":
      return p.limit === 1 ? `${field} must not be empty` : `${field} must be at least ${p.limit} characters`;
    case "maxLength":
      return `${field} must be at most ${p.limit} characters`;
    case "pattern": {
      const description = (e.parentSchema as { description?: string } | undefined)?.description;
      return `${field} must be ${description ?? `a string matching ${p.pattern}`}, got ${JSON.stringify(e.data)}`;
    }
    case "enum":
      return `${field} must be one of ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(", ")}`;
    default:
      return `${field} ${e.message}`;
  }
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
