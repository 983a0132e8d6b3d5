// An example payload for an event type: the catalog's own example, else the schema's
// `examples`, else one value built from the schema's properties (types, enums, formats,
// defaults), so a subscriber sees the payload's shape before the first event.
type Schema = { [key: string]: unknown } | boolean | undefined;

export function exampleOf(type: { example?: unknown; schema?: Schema }): unknown {
  if (type.example !== undefined) return type.example;
  return fromSchema(type.schema, 0);
}

function fromSchema(schema: Schema, depth: number): unknown {
  if (typeof schema !== "object" || schema === null || depth > 8) return null;
  const s = schema as Record<string, unknown>;
  if (Array.isArray(s.examples) && s.examples.length > 0) return s.examples[0];
  if ("const" in s) return s.const;
  if ("default" in s) return s.default;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  for (const key of ["oneOf", "anyOf", "allOf"]) {
    const list = s[key];
    if (Array.isArray(list) && list.length > 0) return fromSchema(list[0] as Schema, depth + 1);
  }
  const type = Array.isArray(s.type) ? s.type.find((t) => t !== "null") : s.type;
  switch (type ?? (s.properties ? "object" : undefined)) {
    case "object": {
      const out: Record<string, unknown> = {};
      const props = (s.properties ?? {}) as Record<string, Schema>;
      for (const [name, sub] of Object.entries(props)) out[name] = fromSchema(sub, depth + 1);
      return out;
    }
    case "array":
      return [fromSchema(s.items as Schema, depth + 1)];
    case "string":
      return stringOf(s.format);
    case "integer":
      return typeof s.minimum === "number" ? Math.ceil(s.minimum) : 0;
    case "number":
      return typeof s.minimum === "number" ? s.minimum : 0;
    case "boolean":
      return true;
    default:
      return null;
  }
}

function stringOf(format: unknown): string {
  switch (format) {
    case "date-time":
      return "2024-01-01T00:00:00Z";
    case "date":
      return "2024-01-01";
    case "uuid":
      return "00000000-0000-0000-0000-000000000000";
    case "email":
      return "user@example.com";
    case "uri":
      return "https://example.com/";
    default:
      return "string";
  }
}
