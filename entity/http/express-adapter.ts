import type { IncomingMessage } from "node:http";
import express, { type NextFunction, type Request, type Response, type Router } from "express";
import type { ClientErrorBody } from "../../common/http-client-errors.js";
import type { Logger } from "../../common/logger.js";
import { assertNoDuplicateKeys, decodeUtf8 } from "../../common/strict-text.js";
import { type EntityErrorCode, EntityServerError, validationError } from "../server/errors.js";
import { type EntityResponse, type EntityServer, errorResponse, unauthenticated } from "../server/server.js";
import {
  answerHttpRequest,
  basicCredentials,
  checkFormEncoding,
  logAnswer,
  negotiatedFormat,
} from "./http-request-map.js";

export interface EntityRouterOptions {
  /** Largest accepted request body (default "1mb"). */
  bodyLimit?: string;
  /** Realm named in WWW-Authenticate on 401 (default "entity-server"). */
  realm?: string;
  logger?: Logger;
}

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
  // Body parsers only where a body can matter: GET and HEAD skip them entirely (one layer: each costs a dispatch).
  router.use((req, res, next) =>
    req.method === "GET" || req.method === "HEAD"
      ? next()
      : urlencoded(req, res, (err?: unknown) => (err ? next(err) : json(req, res, next))),
  );
  router.use(async (req: Request, res: Response) => {
    // Express 5 parses the query string on every access of req.query: read it once.
    const response = await answerHttpRequest(req, req.query as Record<string, unknown>, server);
    send(res, response, realm);
    logAnswer(options.logger, req, response.status);
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

function send(res: Response, r: EntityResponse, realm: string): void {
  res.status(r.status).type(r.contentType);
  if (r.status === 401) res.set("WWW-Authenticate", `Basic realm="${realm}", charset="UTF-8"`);
  if (r.headers) res.set(r.headers);
  res.send(r.body);
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
