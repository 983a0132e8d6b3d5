import type { IncomingMessage } from "node:http";
import type { RequestHandler } from "express";
import { assertNoDuplicateKeys, decodeUtf8, unstorableJson } from "../common/strict-text.js";
import { validation } from "./errors.js";

// Checks of JSON request bodies beyond their schema (common/strict-text.ts,
// shared with the entity server): what PostgreSQL cannot store, what a decoder
// would silently alter, and what two parsers would read differently. Each
// answers 400 naming the field; nothing is stored.

const RAW = Symbol("raw body");
type WithRaw = IncomingMessage & { [RAW]?: string };

/** The request body as received (set by verifyUtf8), when there was one. */
export const rawBody = (req: IncomingMessage): string | undefined => (req as WithRaw)[RAW];

/** express.json's `verify`: the bytes must be UTF-8 (else they would be stored as U+FFFD). */
export function verifyUtf8(req: IncomingMessage, _res: unknown, buf: Buffer): void {
  try {
    (req as WithRaw)[RAW] = decodeUtf8(buf);
  } catch (err) {
    throw Object.assign(validation((err as Error).message), { status: 400 });
  }
}

/** After parsing: no repeated key, no NUL character, no lone surrogate, in keys or values. */
export const checkParsedBody: RequestHandler = (req, _res, next) => {
  const raw = (req as unknown as WithRaw)[RAW];
  if (raw !== undefined) {
    try {
      assertNoDuplicateKeys(raw);
    } catch (err) {
      throw validation((err as Error).message);
    }
    const problem = unstorableJson(raw, req.body);
    if (problem) throw validation(problem);
  }
  next();
};
