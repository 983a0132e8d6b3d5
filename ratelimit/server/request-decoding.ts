// ShouldRateLimit's request read from the wire without ts-proto's reader, and with the
// strings a caller sends again and again (domain, keys, a busy client's values) kept from
// one request to the next instead of decoded anew. The fast path reads only the plain
// form: domain, descriptors of key/value entries, hits_addend, ASCII text. Anything else (a
// limit override, a descriptor's hits_addend, an unknown field, non-ASCII text, a malformed
// message) is read again from the start by ts-proto's decoder, so every request decodes
// exactly as before, errors included.

import type {
  RateLimitDescriptor,
  RateLimitDescriptor_Entry,
} from "../../proto/gen/envoy/extensions/common/ratelimit/v3/ratelimit.js";
import { RateLimitRequest } from "../../proto/gen/envoy/service/ratelimit/v3/rls.js";

/** The last text read at each place of a request (the domain, then each key and value in order). */
const lastTexts: string[] = [];
/** Places remembered per request; the texts of larger requests beyond it are decoded each time. */
const PLACES = 64;

/** Why the fast path gives up: the request is read by ts-proto instead. */
const NOT_PLAIN = Symbol("not plain");

const NO_BYTES = Buffer.alloc(0);
let buf: Buffer = NO_BYTES;
let pos = 0;
let place = 0;

function varint(end: number): number {
  let v = 0;
  let scale = 1;
  for (let i = 0; i < 5; i++) {
    if (pos >= end) throw NOT_PLAIN;
    const b = buf[pos++]!;
    v += (b & 127) * scale;
    if (b < 128) return v;
    scale *= 128;
  }
  throw NOT_PLAIN;
}

/** The bytes of a length-delimited field: their end (pos is at their start). */
function field(end: number): number {
  const len = varint(end);
  if (len > end - pos) throw NOT_PLAIN;
  return pos + len;
}

function text(end: number): string {
  const stop = field(end);
  const start = pos;
  pos = stop;
  const at = place++;
  const last = at < PLACES ? lastTexts[at] : undefined;
  if (last !== undefined && last.length === stop - start) {
    let same = true;
    for (let i = 0; i < last.length; i++) {
      if (buf[start + i] !== last.charCodeAt(i)) {
        same = false;
        break;
      }
    }
    if (same) return last;
  }
  for (let i = start; i < stop; i++) if (buf[i]! >= 128) throw NOT_PLAIN;
  const s = buf.toString("latin1", start, stop);
  if (at < PLACES) lastTexts[at] = s;
  return s;
}

function entry(end: number): RateLimitDescriptor_Entry {
  const e: RateLimitDescriptor_Entry = { key: "", value: "" };
  while (pos < end) {
    const tag = varint(end);
    if (tag === 10) e.key = text(end);
    else if (tag === 18) e.value = text(end);
    else throw NOT_PLAIN;
  }
  return e;
}

function descriptor(end: number): RateLimitDescriptor {
  const d: RateLimitDescriptor = { entries: [], limit: undefined, hitsAddend: undefined };
  while (pos < end) {
    if (varint(end) !== 10) throw NOT_PLAIN;
    d.entries.push(entry(field(end)));
  }
  return d;
}

export function decodeRequest(bytes: Buffer): RateLimitRequest {
  buf = bytes;
  pos = 0;
  place = 0;
  const end = bytes.length;
  const request: RateLimitRequest = { domain: "", descriptors: [], hitsAddend: 0 };
  try {
    while (pos < end) {
      const tag = varint(end);
      if (tag === 10) request.domain = text(end);
      else if (tag === 18) request.descriptors.push(descriptor(field(end)));
      else if (tag === 24) request.hitsAddend = varint(end) >>> 0;
      else throw NOT_PLAIN;
    }
    return request;
  } catch (err) {
    if (err !== NOT_PLAIN) throw err;
    return RateLimitRequest.decode(bytes);
  } finally {
    // Not kept until the next call: the bytes may be a slice of a large read.
    buf = NO_BYTES;
  }
}
