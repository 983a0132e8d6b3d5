import type { ErrorObject } from "ajv";

// ajv's errors as one sentence naming the field by its dotted path (`eventTypes[0]`,
// `payload.items[2].amount`) and saying what was expected. Shared by the API's request
// validation and the event catalog's payload checks, so both read the same way.

const fieldPath = (instancePath: string, child?: string): string => {
  const parts = instancePath
    .split("/")
    .slice(1)
    .map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"));
  if (child !== undefined) parts.push(child);
  return parts.reduce((acc, p) => (/^\d+$/.test(p) ? `${acc}[${p}]` : acc ? `${acc}.${p}` : p), "");
};

/** One error as a sentence; `root` names the document itself (a JSON pointer "" path). */
export function describeError(e: ErrorObject, root = "body"): string {
  const field = fieldPath(e.instancePath) || root;
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

/** The same error with its path moved under `prefix` (a JSON pointer such as "/payload"). */
export const under = (prefix: string, e: ErrorObject): ErrorObject => ({
  ...e,
  instancePath: `${prefix}${e.instancePath}`,
});
