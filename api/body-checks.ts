import { isUtf8 } from "node:buffer";
import type { IncomingMessage } from "node:http";
import type { RequestHandler } from "express";
import { duplicateKey } from "../common/json-duplicates.js";
import { validation } from "./errors.js";

// Checks of JSON request bodies beyond their schema: what PostgreSQL cannot
// store, what a decoder would silently alter, and what two parsers would read
// differently. Each answers 400 naming the field; nothing is stored.

const RAW = Symbol("raw body");
type WithRaw = IncomingMessage & { [RAW]?: Buffer };

/** express.json's `verify`: the bytes must be UTF-8 (else they would be stored as U+FFFD). */
export function verifyUtf8(req: IncomingMessage, _res: unknown, buf: Buffer): void {
  if (!isUtf8(buf)) throw Object.assign(validation("request body is not valid UTF-8"), { status: 400 });
  (req as WithRaw)[RAW] = buf;
}

/** After parsing: no repeated key, no NUL character, no lone surrogate, in keys or values. */
export const checkParsedBody: RequestHandler = (req, _res, next) => {
  const raw = (req as unknown as WithRaw)[RAW];
  if (raw) {
    const duplicate = duplicateKey(raw.toString("utf8"));
    if (duplicate) throw validation(`"${duplicate}" appears twice in the JSON body`);
    walk(req.body, "");
  }
  next();
};

function walk(value: unknown, path: string): void {
  if (typeof value === "string") checkText(value, path || "body");
  else if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) walk(v, `${path}[${i}]`);
  } else if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      const at = path ? `${path}.${k}` : k;
      checkText(k, `key "${at}"`);
      walk(v, at);
    }
  }
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function checkText(text: string, what: string): void {
  if (text.includes("\u0000")) throw validation(`${what} must not contain the NUL character (U+0000)`);
  if (LONE_SURROGATE.test(text))
    throw validation(`${what} contains a lone UTF-16 surrogate (not valid Unicode)`);
}
