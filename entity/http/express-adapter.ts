import express, { type NextFunction, type Request, type Response, type Router } from "express";
import type { Logger } from "../../common/logger.js";
import { EntityServerError, validationError } from "../server/errors.js";
import { FORMATS, type Format, type RequestMap } from "../server/request-map.js";
import { type EntityResponse, type EntityServer, errorResponse } from "../server/server.js";

export interface EntityRouterOptions {
  /** Largest accepted request body (default "1mb"). */
  bodyLimit?: string;
  /** Realm named in WWW-Authenticate on 401 (default "entity-server"). */
  realm?: string;
  logger?: Logger;
}

/** Query/body parameters that callers may set; the other reserved keys come from the path and headers. */
const CALLER_RESERVED = new Set(["_format", "_page", "_max_per_page", "_first", "_max", "_method"]);
const PATH_RESERVED = new Set(["_entity", "_id", "_action", "_username", "_password"]);

const METHODS_BY_SHAPE = {
  collection: { get: "list", head: "list", put: "insert", post: "insert" },
  member: { get: "get", head: "get", put: "update", post: "update", patch: "update", delete: "delete" },
} as const;

/**
 * REST routes over an EntityServer (which has no routing of its own):
 *
 *   GET|HEAD    /{alias}[.{fmt}]               list (query: field filters, _page/_max_per_page or _first/_max)
 *   PUT|POST    /{alias}[.{fmt}]               insert (201)
 *   GET|HEAD    /{alias}/{id}[.{fmt}]          get
 *   PUT|POST|PATCH /{alias}/{id}[.{fmt}]       update
 *   DELETE      /{alias}/{id}[.{fmt}]          delete
 *   any         /{alias}/{action}[.{fmt}]      custom action registered under that name (no id)
 *   any         /{alias}/{id}/{action}[.{fmt}] custom action on one entity
 *
 * {fmt} is xml or json; without it, `_format` or the Accept header decides,
 * and JSON is the default. Bodies are form-encoded or JSON.
 */
export function createEntityRouter(server: EntityServer, options: EntityRouterOptions = {}): Router {
  const router = express.Router();
  const limit = options.bodyLimit ?? "1mb";
  const realm = options.realm ?? "entity-server";
  const urlencoded = express.urlencoded({ extended: false, limit });
  const json = express.json({ limit, strict: false });
  // Body parsers only where a body can matter: GET and HEAD skip them entirely.
  router.use((req, res, next) =>
    req.method === "GET" || req.method === "HEAD" ? next() : urlencoded(req, res, next),
  );
  router.use((req, res, next) =>
    req.method === "GET" || req.method === "HEAD" ? next() : json(req, res, next),
  );
  router.use(async (req: Request, res: Response) => {
    // Express 5 parses the query string on every access of req.query: read it once.
    const query = req.query as Record<string, unknown>;
    let format: Format = negotiatedFormat(req, query);
    let response: EntityResponse;
    try {
      const built = buildRequestMap(req, query, server);
      format = built.format;
      response = await server.handle(built.map);
    } catch (err) {
      response = errorResponse(err, format);
    }
    send(res, response, realm);
    if (response.status >= 500)
      options.logger?.error(
        { method: req.method, path: req.path, status: response.status },
        "request failed",
      );
    else options.logger?.debug({ method: req.method, path: req.path, status: response.status }, "request");
  });
  // Body parser failures (bad JSON, too large, bad charset) arrive here.
  router.use(
    (err: Error & { type?: string; status?: number }, req: Request, res: Response, _next: NextFunction) => {
      const format = negotiatedFormat(req, req.query as Record<string, unknown>);
      const e =
        err.type === "entity.too.large"
          ? new EntityServerError("PAYLOAD_TOO_LARGE", `request body larger than ${limit}`)
          : err.type === "charset.unsupported" || err.type === "encoding.unsupported"
            ? new EntityServerError("UNSUPPORTED_MEDIA_TYPE", err.message)
            : (err.status ?? 500) < 500
              ? validationError(`malformed request body: ${err.message}`)
              : err;
      send(res, errorResponse(e, format), realm);
    },
  );
  return router;
}

function send(res: Response, r: EntityResponse, realm: string): void {
  res.status(r.status).type(r.contentType);
  if (r.status === 401) res.set("WWW-Authenticate", `Basic realm="${realm}", charset="UTF-8"`);
  if (r.headers) res.set(r.headers);
  res.send(r.body);
}

function negotiatedFormat(req: Request, query: Record<string, unknown>): Format {
  const ext = /\.(xml|json)$/i.exec(req.path)?.[1];
  if (ext) return ext.toLowerCase() as Format;
  const q = query._format;
  if (typeof q === "string" && (FORMATS as readonly string[]).includes(q.toLowerCase()))
    return q.toLowerCase() as Format;
  const accepted = req.accepts(["json", "xml"]);
  return accepted === "xml" ? "xml" : "json";
}

function buildRequestMap(
  req: Request,
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
  if (typeof params._format === "string" && pathExt && params._format.toLowerCase() !== pathExt) {
    throw validationError(`_format=${params._format} contradicts the .${pathExt} extension`, "_format");
  }
  if (params._format !== undefined && typeof params._format !== "string") {
    throw validationError("_format given more than once", "_format");
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

  const auth = req.get("authorization");
  if (auth !== undefined) {
    const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(auth);
    const decodedAuth = m?.[1] ? Buffer.from(m[1], "base64").toString("utf8") : "";
    const colon = decodedAuth.indexOf(":");
    if (colon < 0)
      throw new EntityServerError(
        "UNAUTHENTICATED",
        "malformed Authorization header: expected Basic credentials",
      );
    map._username = decodedAuth.slice(0, colon);
    map._password = decodedAuth.slice(colon + 1);
  }
  return { map, format };
}

/** Query and body parameters as one map; `name[]` keys are lists. */
function mergeParams(req: Request, query: Record<string, unknown>): Record<string, unknown> {
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

function isEmptyBody(req: Request): boolean {
  const length = req.get("content-length");
  return req.get("transfer-encoding") === undefined && (length === undefined || length === "0");
}
