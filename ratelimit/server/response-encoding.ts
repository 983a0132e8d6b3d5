// ShouldRateLimit's answer on the wire, written into one reused buffer. ts-proto's encoder
// builds a writer, a list of chunks and two copies of the bytes for every answer; grpc-js
// copies the serialized message into its own frame before `serialize` returns
// (serializeMessage), so one buffer can serve every call. This writes the bytes ts-proto
// would, field by field in its order, for what the service sets on every call (codes,
// limits, remaining hits, reset times, RateLimit-* headers). An answer with anything else
// (raw body, dynamic metadata, quota, a value protobuf would sign-extend) goes to ts-proto.

import type { HeaderValue } from "../../proto/gen/envoy/config/core/v3/base.js";
import {
  RateLimitResponse,
  type RateLimitResponse_DescriptorStatus,
  type RateLimitResponse_RateLimit,
} from "../../proto/gen/envoy/service/ratelimit/v3/rls.js";
import type { Duration } from "../../proto/gen/google/protobuf/duration.js";

/** Answers larger than this (thousands of descriptors) get a buffer of their own, not kept. */
const KEPT_BYTES = 64 * 1024;
let kept = Buffer.allocUnsafe(4096);
let buf = kept;
let pos = 0;

/** Bytes of `v` (an integer from 0 to 2^53 - 1) as a varint. */
function varintSize(v: number): number {
  let n = 1;
  while (v >= 128) {
    v = Math.floor(v / 128);
    n++;
  }
  return n;
}

function writeVarint(v: number): void {
  while (v >= 128) {
    buf[pos++] = (v % 128) | 128;
    v = Math.floor(v / 128);
  }
  buf[pos++] = v;
}

/** Fields ts-proto writes as a varint (int32, uint32, enums) hold 0 to 2^32 - 1 here. */
const isUint32 = (v: number) => Number.isInteger(v) && v >= 0 && v <= 0xffff_ffff;

/** A tag and a length-delimited field of `size` bytes. */
const delimited = (size: number) => 1 + varintSize(size) + size;

function limitSize(l: RateLimitResponse_RateLimit): number {
  let n = 0;
  if (l.name !== "") n += delimited(Buffer.byteLength(l.name));
  if (l.requestsPerUnit !== 0) n += 1 + varintSize(l.requestsPerUnit);
  if (l.unit !== 0) n += 1 + varintSize(l.unit);
  return n;
}

function durationSize(d: Duration): number {
  let n = 0;
  if (d.seconds !== 0n) n += 1 + varintSize(Number(d.seconds));
  if (d.nanos !== 0) n += 1 + varintSize(d.nanos);
  return n;
}

function statusSize(s: RateLimitResponse_DescriptorStatus): number {
  let n = 0;
  if (s.code !== 0) n += 1 + varintSize(s.code);
  if (s.currentLimit !== undefined) n += delimited(limitSize(s.currentLimit));
  if (s.limitRemaining !== 0) n += 1 + varintSize(s.limitRemaining);
  if (s.durationUntilReset !== undefined) n += delimited(durationSize(s.durationUntilReset));
  return n;
}

function headerSize(h: HeaderValue): number {
  let n = 0;
  if (h.key !== "") n += delimited(Buffer.byteLength(h.key));
  if (h.value !== "") n += delimited(Buffer.byteLength(h.value));
  return n;
}

const withoutRawValues = (headers: HeaderValue[]) => {
  for (let i = 0; i < headers.length; i++) if (headers[i]!.rawValue.length !== 0) return false;
  return true;
};

/** True when every field of `r` is one this file writes, with values it writes as ts-proto does. */
function writable(r: RateLimitResponse): boolean {
  if (r.rawBody.length !== 0 || r.dynamicMetadata !== undefined || r.quota !== undefined) return false;
  if (!isUint32(r.overallCode)) return false;
  const statuses = r.statuses;
  for (let i = 0; i < statuses.length; i++) {
    const s = statuses[i]!;
    if (s.quota !== undefined || !isUint32(s.code) || !isUint32(s.limitRemaining)) return false;
    const l = s.currentLimit;
    if (l && (!isUint32(l.requestsPerUnit) || !isUint32(l.unit))) return false;
    const d = s.durationUntilReset;
    if (d && (d.seconds < 0n || d.seconds > 9_007_199_254_740_991n || !isUint32(d.nanos))) return false;
  }
  return withoutRawValues(r.responseHeadersToAdd) && withoutRawValues(r.requestHeadersToAdd);
}

function writeString(tag: number, text: string): void {
  const size = Buffer.byteLength(text);
  buf[pos++] = tag;
  writeVarint(size);
  pos += buf.write(text, pos, size, "utf8");
}

function writeStatus(s: RateLimitResponse_DescriptorStatus): void {
  buf[pos++] = 18;
  writeVarint(statusSize(s));
  if (s.code !== 0) {
    buf[pos++] = 8;
    writeVarint(s.code);
  }
  const l = s.currentLimit;
  if (l !== undefined) {
    buf[pos++] = 18;
    writeVarint(limitSize(l));
    if (l.name !== "") writeString(26, l.name);
    if (l.requestsPerUnit !== 0) {
      buf[pos++] = 8;
      writeVarint(l.requestsPerUnit);
    }
    if (l.unit !== 0) {
      buf[pos++] = 16;
      writeVarint(l.unit);
    }
  }
  if (s.limitRemaining !== 0) {
    buf[pos++] = 24;
    writeVarint(s.limitRemaining);
  }
  const d = s.durationUntilReset;
  if (d !== undefined) {
    buf[pos++] = 34;
    writeVarint(durationSize(d));
    if (d.seconds !== 0n) {
      buf[pos++] = 8;
      writeVarint(Number(d.seconds));
    }
    if (d.nanos !== 0) {
      buf[pos++] = 16;
      writeVarint(d.nanos);
    }
  }
}

function headersSize(headers: HeaderValue[]): number {
  let n = 0;
  for (let i = 0; i < headers.length; i++) n += delimited(headerSize(headers[i]!));
  return n;
}

function writeHeaders(tag: number, headers: HeaderValue[]): void {
  for (let i = 0; i < headers.length; i++) {
    const h = headers[i]!;
    buf[pos++] = tag;
    writeVarint(headerSize(h));
    if (h.key !== "") writeString(10, h.key);
    if (h.value !== "") writeString(18, h.value);
  }
}

/**
 * The serialized answer. The buffer returned is reused by the next call: the caller must
 * copy it before calling again (grpc-js does, at once).
 */
export function encodeResponse(r: RateLimitResponse): Buffer {
  if (!writable(r)) return Buffer.from(RateLimitResponse.encode(r).finish());
  const statuses = r.statuses;
  let size = 0;
  if (r.overallCode !== 0) size += 1 + varintSize(r.overallCode);
  for (let i = 0; i < statuses.length; i++) size += delimited(statusSize(statuses[i]!));
  size += headersSize(r.responseHeadersToAdd) + headersSize(r.requestHeadersToAdd);
  if (size > kept.length && size <= KEPT_BYTES) kept = Buffer.allocUnsafe(Math.min(KEPT_BYTES, 2 * size));
  buf = size <= kept.length ? kept : Buffer.allocUnsafe(size);
  pos = 0;
  if (r.overallCode !== 0) {
    buf[pos++] = 8;
    writeVarint(r.overallCode);
  }
  for (let i = 0; i < statuses.length; i++) writeStatus(statuses[i]!);
  writeHeaders(26, r.responseHeadersToAdd);
  writeHeaders(34, r.requestHeadersToAdd);
  return buf.subarray(0, pos);
}
