import { XMLParser } from "fast-xml-parser";

export type ResponseFormat = "xml" | "json";

/** A response body turned into data the client can hydrate. */
export type TransformedResponse =
  | { kind: "entity"; data: Record<string, unknown> }
  | { kind: "collection"; items: Record<string, unknown>[] }
  | { kind: "value"; value: unknown }
  | { kind: "error"; code?: string; message?: string; field?: string };

/** Turns a response body into entity data. Throw on a body it cannot read. */
export interface ResponseTransformer {
  transform(body: string, format: ResponseFormat): TransformedResponse;
}

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: "@_",
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
  ignoreDeclaration: true,
  ignorePiTags: true,
  processEntities: true,
  htmlEntities: true,
});

type XmlNode = string | Record<string, unknown>;

/**
 * Reads the entity server's XML and JSON (see entity/README.md for the
 * rules): XML type attributes give back integers, floats, booleans, dates,
 * bytes, lists, objects and null; a one-element list stays a list.
 */
export class StandardResponseTransformer implements ResponseTransformer {
  transform(body: string, format: ResponseFormat): TransformedResponse {
    return format === "xml" ? this.fromXml(body) : this.fromJson(body);
  }

  private fromJson(body: string): TransformedResponse {
    const value: unknown = JSON.parse(body);
    if (Array.isArray(value)) {
      return { kind: "collection", items: value.filter(isRecord) };
    }
    if (isRecord(value)) {
      const err = value.error;
      if (Object.keys(value).length === 1 && isRecord(err) && typeof err.code === "string") {
        return {
          kind: "error",
          code: err.code,
          ...(typeof err.message === "string" ? { message: err.message } : {}),
          ...(typeof err.field === "string" ? { field: err.field } : {}),
        };
      }
      return { kind: "entity", data: value };
    }
    return { kind: "value", value };
  }

  private fromXml(body: string): TransformedResponse {
    // fast-xml-parser reads a DTD's internal entities and expands them (billion-laughs
    // style growth, or text the server never sent); the entity server never sends a DTD.
    if (/<!DOCTYPE/i.test(body)) throw new Error("the XML response declares a DTD (<!DOCTYPE>): refused");
    const doc = parser.parse(body, true) as Record<string, XmlNode>;
    const roots = Object.keys(doc);
    if (roots.length !== 1) throw new Error(`expected one root element, found ${roots.length}`);
    const name = roots[0]!;
    const root = doc[name]!;
    if (name === "error" && typeof root === "object") {
      const text = (k: string) => (typeof root[k] === "string" ? (root[k] as string) : undefined);
      const code = text("code");
      const message = text("message");
      const field = text("field");
      return {
        kind: "error",
        ...(code ? { code } : {}),
        ...(message ? { message } : {}),
        ...(field ? { field } : {}),
      };
    }
    if (typeof root === "object" && root["@_type"] === "collection") {
      return { kind: "collection", items: asList(root[name]).map((n) => entityData(n)) };
    }
    if (typeof root === "object" && root["@_type"] === undefined && root["@_nil"] === undefined) {
      return { kind: "entity", data: entityData(root) };
    }
    if (root === "") return { kind: "entity", data: {} };
    return { kind: "value", value: decodeValue(root) };
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function asList(node: unknown): XmlNode[] {
  if (node === undefined) return [];
  return (Array.isArray(node) ? node : [node]) as XmlNode[];
}

function entityData(node: XmlNode): Record<string, unknown> {
  if (typeof node === "string") return {};
  return children(node);
}

function children(node: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(node)) {
    if (key.startsWith("@_") || key === "#text") continue;
    if (key === "entry") {
      for (const entry of asList(child)) {
        if (typeof entry === "object" && typeof entry["@_key"] === "string")
          out[entry["@_key"]] = decodeValue(entry);
        else out.entry = decodeValue(entry);
      }
      continue;
    }
    // A repeated element outside a list is not something the server writes; keep the last.
    const nodes = asList(child);
    out[key] = decodeValue(nodes[nodes.length - 1]!);
  }
  return out;
}

function decodeValue(node: XmlNode): unknown {
  if (typeof node === "string") return node;
  if (node["@_nil"] === "true") return null;
  const raw = typeof node["#text"] === "string" ? (node["#text"] as string) : "";
  const text = node["@_encoding"] === "base64" ? Buffer.from(raw, "base64").toString("utf8") : raw;
  switch (node["@_type"]) {
    case "integer": {
      const n = Number(text);
      return Number.isSafeInteger(n) ? n : BigInt(text);
    }
    case "float":
      return Number(text);
    case "decimal":
      return text;
    case "boolean":
      return text === "true";
    case "datetime":
      return new Date(text);
    case "base64":
      return new Uint8Array(Buffer.from(text, "base64"));
    case "array":
      return asList(node.item).map(decodeValue);
    case "object":
      return children(node);
    default:
      return text;
  }
}
