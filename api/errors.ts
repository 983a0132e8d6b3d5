import type { ErrorRequestHandler, RequestHandler, Response } from "express";
import { type DatabaseTimeouts, explainDatabaseTimeout } from "../common/db/timeouts.js";
import type { Logger } from "../common/logger.js";
import { PlainValueLooksSealed, SealedValueError } from "../core/sealing.js";
import { PermanentStartFailure } from "../core/start-failures.js";

export type ErrorCode =
  | "VALIDATION"
  | "NOT_FOUND"
  | "UNAUTHORIZED"
  | "SESSION_EXPIRED"
  | "SESSION_REVOKED"
  | "FORBIDDEN"
  | "CONFLICT"
  | "UNAVAILABLE"
  | "RATE_LIMITED"
  | "INTERNAL";

/** An error the API answers with its own status and code (and a Retry-After when it has one). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

export const validation = (message: string) => new ApiError(400, "VALIDATION", message);
export const notFound = (message: string) => new ApiError(404, "NOT_FOUND", message);
export const unavailable = (message: string) => new ApiError(503, "UNAVAILABLE", message);

export function sendError(res: Response, status: number, code: ErrorCode, message: string): void {
  res.status(status).json({ errorCode: code, errorMessage: message });
}

/** 404 in the error format for paths no route serves. */
export const unknownRoute: RequestHandler = (req, res) =>
  sendError(res, 404, "NOT_FOUND", `no route for ${req.method} ${req.path}`);

/**
 * Last handler: every error becomes a JSON body, 500 included. Body-parser
 * errors (malformed JSON, too large) are the caller's and say so; a query cut
 * off by the database pool's timeouts is a 503 naming the setting.
 */
export function errorHandler(logger: Logger, dbTimeouts?: DatabaseTimeouts): ErrorRequestHandler {
  return (err, req, res, _next) => {
    if (err instanceof ApiError) {
      if (err.retryAfterSeconds !== undefined) res.setHeader("Retry-After", String(err.retryAfterSeconds));
      return sendError(res, err.status, err.code, err.message);
    }
    if (err?.type === "entity.verify.failed" && err.message)
      return sendError(res, 400, "VALIDATION", err.message);
    if (err instanceof PermanentStartFailure) return sendError(res, 409, "CONFLICT", err.message);
    if (err instanceof PlainValueLooksSealed) return sendError(res, 400, "VALIDATION", err.message);
    // Names the key id and the row, never the value.
    if (err instanceof SealedValueError)
      return sendError(res, 500, "INTERNAL", `a stored secret cannot be opened: ${err.message}`);
    const timeout = dbTimeouts && explainDatabaseTimeout(err, dbTimeouts);
    if (timeout) {
      logger.warn(
        { method: req.method, path: req.path, reason: timeout },
        "request cut off by a database timeout",
      );
      return sendError(res, 503, "UNAVAILABLE", `${timeout}; try again`);
    }
    const e = err as { type?: string; status?: number; message?: string; limit?: number };
    if (e.type === "entity.parse.failed")
      return sendError(res, 400, "VALIDATION", `malformed JSON body: ${e.message}`);
    if (e.type === "entity.too.large") {
      return sendError(res, 413, "VALIDATION", `request body larger than the ${e.limit} byte limit`);
    }
    if (e.type === "encoding.unsupported" || e.type === "charset.unsupported") {
      return sendError(res, 415, "VALIDATION", e.message ?? "unsupported body encoding");
    }
    // The body decoders' own client errors (e.g. gzip that is not gzip): the caller's fault.
    const decoding = err as { expose?: boolean; status?: number; message?: string };
    if (decoding.expose && decoding.status && decoding.status >= 400 && decoding.status < 500) {
      const encoding = req.headers["content-encoding"];
      const what = encoding ? `request body is not valid ${encoding} data` : "request body could not be read";
      return sendError(res, decoding.status, "VALIDATION", `${what}: ${decoding.message}`);
    }
    logger.error({ err, method: req.method, path: req.path }, "request failed");
    sendError(res, 500, "INTERNAL", "internal error; see the service logs");
  };
}
