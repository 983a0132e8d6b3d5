import type { IncomingMessage } from "node:http";
import express, { type NextFunction, type Request, type Response, type Router } from "express";
import type { ClientErrorBody } from "../../common/http-client-errors.js";
import type { Logger } from "../../common/logger.js";
import { assertNoDuplicateKeys, decodeUtf8 } from "../../common/strict-text.js";
import { type EntityErrorCode, EntityServerError, validationError } from "../server/errors.js";
import { FORMATS, type Format, type RequestMap } from "../server/request-map.js";
import { type EntityResponse, type EntityServer, errorResponse, unauthenticated } from "../server/server.js";

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
  // `verify` sees the raw bytes before the parser does: what it refuses is never parsed
  // (the parsers would quietly replace invalid UTF-8 and keep the last of two equal keys).
  const urlencoded = express.urlencoded({ extended: false, limit, verify: verifyForm });
  const json = express.json({ limit, strict: false, verify: verifyJson });
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
      checkRequestTarget(req.originalUrl);
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
            : isZlibError(err)
              ? validationError(
                  `malformed request body: it is not valid ${req.get("content-encoding")} (${err.message})`,
                )
              : (err.status ?? 500) < 500
                ? validationError(`malformed request body: ${err.message}`)
                : err;
      send(res, errorResponse(e, format), realm);
    },
  );
  return router;
}

/** The errors zlib raises for a body whose Content-Encoding does not match its bytes. */
function isZlibError(err: Error & { code?: string }): boolean {
  return typeof err.code === "string" && err.code.startsWith("Z_");
}

function verifyForm(_req: IncomingMessage, _res: unknown, buf: Buffer): void {
  checkFormEncoding(decodeUtf8(buf, "the form"), "form");
}

function verifyJson(_req: IncomingMessage, _res: unknown, buf: Buffer, encoding: string): void {
  // Other Unicode encodings (utf-16, utf-32) are decoded by the parser; only UTF-8 can be checked byte-wise.
  const text = /^utf-?8$/i.test(encoding) ? decodeUtf8(buf, "the JSON") : buf.toString();
  assertNoDuplicateKeys(text);
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
function checkFormEncoding(text: string, where: string): void {
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
function basicCredentials(req: Request): { username: string; password: string } | undefined {
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

/**
 * Middleware for a host's own endpoints (such as /_info): the server's
 * authenticator must accept the request's Basic credentials, as for entity
 * requests; the authenticator sees `alias` and `action` as given here.
 */
export function requireCredentials(
  server: EntityServer,
  what: { alias: string; action: string },
  realm = "entity-server",
) {
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      const credentials = basicCredentials(req);
      if (await server.isAuthorized({ ...what, ...credentials })) return next();
      throw unauthenticated(credentials?.username);
    } catch (err) {
      send(res, errorResponse(err, negotiatedFormat(req, req.query as Record<string, unknown>)), realm);
    }
  };
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

const CLIENT_ERROR_CODES: Record<number, EntityErrorCode> = {
  408: "REQUEST_TIMEOUT",
  413: "PAYLOAD_TOO_LARGE",
  431: "HEADERS_TOO_LARGE",
};

/**
 * The answer to a request Node's HTTP parser refused (see
 * common/http-client-errors.ts), in XML when what was read of the request asks
 * for it (a `.xml` path, `_format=xml`, or an Accept header naming XML first).
 */
export function renderClientError(status: number, message: string, rawRequest: string): ClientErrorBody {
  const target = /^[A-Z]+ (\S+)/.exec(rawRequest)?.[1] ?? "";
  const accept = /\r\naccept:([^\r]*)/i.exec(rawRequest)?.[1] ?? "";
  const xml =
    /\.xml(\?|$)/i.test(target) ||
    /[?&]_format=xml(&|$)/i.test(target) ||
    /^\s*(application|text)\/xml/i.test(accept);
  const error = new EntityServerError(CLIENT_ERROR_CODES[status] ?? "VALIDATION", message);
  const r = errorResponse(error, xml ? "xml" : "json");
  return { contentType: r.contentType, body: r.body };
}
