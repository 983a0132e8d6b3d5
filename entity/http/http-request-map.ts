import type { Logger } from "../../common/logger.js";
import { EntityServerError, validationError } from "../server/errors.js";
import { FORMATS, type Format, type RequestMap } from "../server/request-map.js";
import { type EntityResponse, type EntityServer, errorResponse } from "../server/server.js";

/**
 * What the translation of an HTTP request into a request map reads. An
 * express Request provides it all; the node:http fast path (fast-path.ts)
 * builds one for the requests it takes.
 */
export interface HttpRequestView {
  readonly method: string;
  /** The path of the request target, as sent (percent-encoded). */
  readonly path: string;
  /** The request target as sent. */
  readonly originalUrl: string;
  /** A header by name (any case). */
  get(name: string): string | undefined;
  /** Content negotiation over the Accept header, as express's `req.accepts`. */
  accepts(types: string[]): string | false;
  /** Whether the body is of one of these types, as express's `req.is`. */
  is(types: string[]): string | false | null;
  /** The parsed body, when a body parser ran. */
  readonly body?: unknown;
}

/** Query/body parameters that callers may set; the other reserved keys come from the path and headers. */
const CALLER_RESERVED = new Set(["_format", "_page", "_max_per_page", "_first", "_max", "_method"]);
const PATH_RESERVED = new Set(["_entity", "_id", "_action", "_username", "_password"]);

const METHODS_BY_SHAPE = {
  collection: { get: "list", head: "list", put: "insert", post: "insert" },
  member: { get: "get", head: "get", put: "update", post: "update", patch: "update", delete: "delete" },
} as const;

/** Runs one HTTP request through the server; never throws: failures come back rendered. */
export async function answerHttpRequest(
  req: HttpRequestView,
  query: Record<string, unknown>,
  server: EntityServer,
): Promise<EntityResponse> {
  let format: Format = negotiatedFormat(req, query);
  try {
    checkRequestTarget(req.originalUrl);
    const built = buildRequestMap(req, query, server);
    format = built.format;
    return await server.handle(built.map);
  } catch (err) {
    return errorResponse(err, format);
  }
}

/** One log line per request: debug, or error for a 5xx. */
export function logAnswer(logger: Logger | undefined, req: HttpRequestView, status: number): void {
  if (status >= 500) logger?.error({ method: req.method, path: req.path, status }, "request failed");
  else logger?.debug({ method: req.method, path: req.path, status }, "request");
}

/**
 * The request target must be ASCII (Node reads other bytes as Latin-1, which
 * would store them altered) and its query well-formed percent-encoded UTF-8.
 */
function checkRequestTarget(url: string): void {
  if (/[^\x21-\x7e]/.test(url)) throw validationError("the URL must be ASCII: percent-encode other bytes");
  const q = url.indexOf("?");
  if (q >= 0) checkFormEncoding(url.slice(q + 1), "query string");
}

/**
 * Node's querystring replaces malformed escapes (`%ff`, `%ZZ`, an encoded lone
 * surrogate) with U+FFFD instead of failing; refuse them so nothing is stored altered.
 */
export function checkFormEncoding(text: string, where: string): void {
  for (const part of text.split("&")) {
    try {
      decodeURIComponent(part.replace(/\+/g, " "));
    } catch {
      const shown = part.length > 40 ? `${part.slice(0, 40)}…` : part;
      throw validationError(
        `malformed percent-encoding in the ${where}: ${JSON.stringify(shown)} is not UTF-8`,
      );
    }
  }
}

/** The format of the answer: the path's extension, else `_format`, else the Accept header, else JSON. */
export function negotiatedFormat(req: HttpRequestView, query: Record<string, unknown>): Format {
  const ext = /\.(xml|json)$/i.exec(req.path)?.[1];
  if (ext) return ext.toLowerCase() as Format;
  const q = query._format;
  if (typeof q === "string" && (FORMATS as readonly string[]).includes(q.toLowerCase()))
    return q.toLowerCase() as Format;
  const accepted = req.accepts(["json", "xml"]);
  return accepted === "xml" ? "xml" : "json";
}

function buildRequestMap(
  req: HttpRequestView,
  query: Record<string, unknown>,
  server: EntityServer,
): { map: RequestMap; format: Format } {
  const segments = req.path.split("/").filter((s) => s !== "");
  let format = negotiatedFormat(req, query);
  const last = segments.length - 1;
  if (last >= 0) {
    const m = /^(.*)\.(xml|json)$/i.exec(segments[last]!);
    if (m?.[1]) segments[last] = m[1];
  }
  let decoded: string[];
  try {
    decoded = segments.map((s) => decodeURIComponent(s));
  } catch {
    throw validationError("malformed percent-encoding in the path");
  }
  if (decoded.length === 0 || decoded.length > 3) {
    throw new EntityServerError(
      "UNKNOWN_ENTITY",
      `no route for ${req.path}: expected /{alias}[/{id}][/{action}]`,
    );
  }

  const params = mergeParams(req, query);
  const pathExt = /\.(xml|json)$/i.exec(req.path)?.[1]?.toLowerCase();
  if (params._format !== undefined && typeof params._format !== "string") {
    throw validationError("_format given more than once", "_format");
  }
  if (
    typeof params._format === "string" &&
    !(FORMATS as readonly string[]).includes(params._format.toLowerCase())
  ) {
    throw new EntityServerError(
      "NOT_ACCEPTABLE",
      `unsupported format "${params._format}": expected xml or json`,
      "_format",
    );
  }
  if (typeof params._format === "string" && pathExt && params._format.toLowerCase() !== pathExt) {
    throw validationError(`_format=${params._format} contradicts the .${pathExt} extension`, "_format");
  }
  if (pathExt) format = pathExt as Format;

  let method = req.method.toLowerCase();
  if (params._method !== undefined) {
    if (method !== "post" || typeof params._method !== "string") {
      throw validationError("_method overrides only a POST, with one of put, patch, delete", "_method");
    }
    method = params._method.toLowerCase();
    if (!["put", "patch", "delete"].includes(method)) {
      throw validationError("_method overrides only a POST, with one of put, patch, delete", "_method");
    }
  }
  delete params._method;

  const [alias, second, third] = decoded as [string, string | undefined, string | undefined];
  const map: RequestMap = { ...params, _method: method, _format: format, _entity: alias };
  if (third !== undefined) {
    map._id = second!;
    map._action = third;
  } else if (second !== undefined && server.hasCustomAction(alias, second)) {
    map._action = second;
  } else {
    const shape = second === undefined ? "collection" : "member";
    const table: Record<string, string> = METHODS_BY_SHAPE[shape];
    const action = Object.hasOwn(table, method) ? table[method] : undefined;
    if (!action) {
      const allowed = Object.keys(table)
        .map((m) => m.toUpperCase())
        .join(", ");
      const e = new EntityServerError(
        "METHOD_NOT_ALLOWED",
        `${method.toUpperCase()} is not allowed here (allowed: ${allowed})`,
      );
      e.headers = { Allow: allowed };
      throw e;
    }
    map._action = action;
    if (second !== undefined) map._id = second;
  }

  const credentials = basicCredentials(req);
  if (credentials) {
    map._username = credentials.username;
    map._password = credentials.password;
  }
  return { map, format };
}

/** The credentials of an `Authorization: Basic` header; undefined without one; UNAUTHENTICATED when malformed. */
export function basicCredentials(req: HttpRequestView): { username: string; password: string } | undefined {
  const auth = req.get("authorization");
  if (auth === undefined) return undefined;
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(auth);
  const decoded = m?.[1] ? Buffer.from(m[1], "base64").toString("utf8") : "";
  const colon = decoded.indexOf(":");
  if (colon < 0)
    throw new EntityServerError(
      "UNAUTHENTICATED",
      "malformed Authorization header: expected Basic credentials",
    );
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** Query and body parameters as one map; `name[]` keys are lists. */
function mergeParams(req: HttpRequestView, query: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const add = (source: "query" | "body", obj: unknown) => {
    if (obj === undefined || obj === null) return;
    if (typeof obj !== "object" || Array.isArray(obj)) {
      throw validationError(`the ${source} must be a set of named parameters (a JSON object or a form)`);
    }
    for (const [rawKey, rawValue] of Object.entries(obj)) {
      const list = rawKey.endsWith("[]");
      const key = list ? rawKey.slice(0, -2) : rawKey;
      if (PATH_RESERVED.has(key))
        throw validationError(`"${key}" is set by the path or headers, not by parameters`, key);
      if (key.startsWith("_") && !CALLER_RESERVED.has(key))
        throw validationError(`unknown reserved parameter "${key}"`, key);
      if (Object.hasOwn(out, key))
        throw validationError(
          `parameter "${key}" is given twice (query and body, or with and without [])`,
          key,
        );
      let value = rawValue;
      if (list) {
        const items = Array.isArray(rawValue) ? rawValue : [rawValue];
        value = items.length === 1 && items[0] === "" ? [] : items;
      }
      out[key] = value;
    }
  };
  add("query", query);
  if (!isEmptyBody(req)) {
    if (!req.is(["application/x-www-form-urlencoded", "application/json", "+json"])) {
      const type = req.get("content-type") ?? "none";
      throw new EntityServerError(
        "UNSUPPORTED_MEDIA_TYPE",
        `unsupported request body type "${type}": send a form or JSON`,
      );
    }
    // GET and HEAD bodies are not parsed (and so ignored).
    if (req.body !== undefined) add("body", req.body);
  }
  return out;
}

/** No Transfer-Encoding, and no Content-Length or a zero one. */
export function isEmptyBody(req: Pick<HttpRequestView, "get">): boolean {
  const length = req.get("content-length");
  return req.get("transfer-encoding") === undefined && (length === undefined || length === "0");
}
