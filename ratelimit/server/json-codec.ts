// The proto3 JSON form of the request and response, for POST /json and the client
// command. Field names are accepted in lowerCamel and in their proto (snake_case)
// spelling; unknown fields and wrong types are rejected with the path of the field.
// Output omits default values, writes enums by name and durations as "58s".

import { hasLoneSurrogate, parseStrictJson } from "../../common/strict-text.js";
import type { RateLimitDescriptor } from "../../proto/gen/envoy/extensions/common/ratelimit/v3/ratelimit.js";
import {
  type RateLimitRequest,
  type RateLimitResponse,
  RateLimitResponse_Code,
  rateLimitResponse_CodeToJSON,
  rateLimitResponse_RateLimit_UnitToJSON,
} from "../../proto/gen/envoy/service/ratelimit/v3/rls.js";
import { RateLimitUnit } from "../../proto/gen/envoy/type/v3/ratelimit_unit.js";

export class JsonRequestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "JsonRequestError";
  }
}

type Obj = Record<string, unknown>;

function object(v: unknown, at: string): Obj {
  if (v === null || typeof v !== "object" || Array.isArray(v))
    throw new JsonRequestError(`${at}: expected an object`);
  return v as Obj;
}

/** Reads the fields of `o`, each under its camelCase or snake_case name; rejects any other field. */
function fields(o: Obj, at: string, names: Record<string, string>): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const [k, v] of Object.entries(o)) {
    const canonical = names[k];
    if (!canonical) {
      const known = [...new Set(Object.values(names))].join(", ");
      throw new JsonRequestError(`${at}: unknown field "${k}" (expected ${known})`);
    }
    if (out.has(canonical)) throw new JsonRequestError(`${at}: field "${canonical}" given twice`);
    if (v !== null) out.set(canonical, v);
  }
  return out;
}

function str(v: unknown, at: string): string {
  if (v === undefined) return "";
  if (typeof v !== "string") throw new JsonRequestError(`${at}: expected a string`);
  // A lone surrogate would reach the counter store as U+FFFD, merging distinct values into one counter.
  if (hasLoneSurrogate(v)) throw new JsonRequestError(`${at}: contains a lone surrogate (not valid Unicode)`);
  return v;
}

function unsigned(v: unknown, at: string, max: bigint): bigint {
  if (v === undefined) return 0n;
  let n: bigint;
  if (typeof v === "number" && Number.isInteger(v)) n = BigInt(v);
  else if (typeof v === "string" && /^\d+$/.test(v)) n = BigInt(v);
  else throw new JsonRequestError(`${at}: expected an unsigned integer`);
  if (n < 0n || n > max) throw new JsonRequestError(`${at}: ${n} is out of range (0 to ${max})`);
  return n;
}

function list(v: unknown, at: string): unknown[] {
  if (v === undefined) return [];
  if (!Array.isArray(v)) throw new JsonRequestError(`${at}: expected a list`);
  return v;
}

function overrideUnit(v: unknown, at: string): RateLimitUnit {
  if (v === undefined) return RateLimitUnit.UNKNOWN;
  if (typeof v === "number" && Number.isInteger(v) && v >= 0 && v <= 6) return v as RateLimitUnit;
  if (typeof v === "string" && v in RateLimitUnit && v !== "UNRECOGNIZED") {
    return RateLimitUnit[v as keyof typeof RateLimitUnit];
  }
  throw new JsonRequestError(`${at}: expected one of UNKNOWN, SECOND, MINUTE, HOUR, DAY, MONTH, YEAR`);
}

function descriptorFromJson(v: unknown, at: string): RateLimitDescriptor {
  const f = fields(object(v, at), at, {
    entries: "entries",
    limit: "limit",
    hitsAddend: "hitsAddend",
    hits_addend: "hitsAddend",
  });
  const entries = list(f.get("entries"), `${at}.entries`).map((e, i) => {
    const eat = `${at}.entries[${i}]`;
    const ef = fields(object(e, eat), eat, { key: "key", value: "value" });
    return { key: str(ef.get("key"), `${eat}.key`), value: str(ef.get("value"), `${eat}.value`) };
  });
  let limit: RateLimitDescriptor["limit"];
  if (f.has("limit")) {
    const lat = `${at}.limit`;
    const lf = fields(object(f.get("limit"), lat), lat, {
      requestsPerUnit: "requestsPerUnit",
      requests_per_unit: "requestsPerUnit",
      unit: "unit",
    });
    limit = {
      requestsPerUnit: Number(unsigned(lf.get("requestsPerUnit"), `${lat}.requestsPerUnit`, 0xffff_ffffn)),
      unit: overrideUnit(lf.get("unit"), `${lat}.unit`),
    };
  }
  const hits = f.get("hitsAddend");
  return {
    entries,
    limit,
    hitsAddend: hits === undefined ? undefined : unsigned(hits, `${at}.hitsAddend`, 0xffff_ffff_ffff_ffffn),
  };
}

/** Parses the JSON text of a RateLimitRequest; throws JsonRequestError naming the bad field. */
export function requestFromJson(text: string): RateLimitRequest {
  let body: unknown;
  try {
    body = parseStrictJson(text);
  } catch (err) {
    throw new JsonRequestError(`invalid JSON: ${(err as Error).message}`);
  }
  const f = fields(object(body, "request"), "request", {
    domain: "domain",
    descriptors: "descriptors",
    hitsAddend: "hitsAddend",
    hits_addend: "hitsAddend",
  });
  return {
    domain: str(f.get("domain"), "domain"),
    descriptors: list(f.get("descriptors"), "descriptors").map((d, i) =>
      descriptorFromJson(d, `descriptors[${i}]`),
    ),
    hitsAddend: Number(unsigned(f.get("hitsAddend"), "hitsAddend", 0xffff_ffffn)),
  };
}

/** The response in proto3 JSON form (defaults omitted). */
export function responseToJson(r: RateLimitResponse): Obj {
  const out: Obj = {};
  if (r.overallCode !== RateLimitResponse_Code.UNKNOWN)
    out.overallCode = rateLimitResponse_CodeToJSON(r.overallCode);
  if (r.statuses.length) {
    out.statuses = r.statuses.map((s) => {
      const o: Obj = {};
      if (s.code !== RateLimitResponse_Code.UNKNOWN) o.code = rateLimitResponse_CodeToJSON(s.code);
      if (s.currentLimit) {
        const l: Obj = {};
        if (s.currentLimit.name) l.name = s.currentLimit.name;
        if (s.currentLimit.requestsPerUnit) l.requestsPerUnit = s.currentLimit.requestsPerUnit;
        if (s.currentLimit.unit) l.unit = rateLimitResponse_RateLimit_UnitToJSON(s.currentLimit.unit);
        o.currentLimit = l;
      }
      if (s.limitRemaining) o.limitRemaining = s.limitRemaining;
      if (s.durationUntilReset) {
        const { seconds, nanos } = s.durationUntilReset;
        o.durationUntilReset = nanos
          ? `${(Number(seconds) + nanos / 1e9).toFixed(9).replace(/0+$/, "")}s`
          : `${seconds}s`;
      }
      return o;
    });
  }
  const headers = (list: { key: string; value: string; rawValue: Buffer }[]) =>
    list.map((h) => {
      const o: Obj = {};
      if (h.key) o.key = h.key;
      if (h.value) o.value = h.value;
      if (h.rawValue?.length) o.rawValue = h.rawValue.toString("base64");
      return o;
    });
  if (r.responseHeadersToAdd.length) out.responseHeadersToAdd = headers(r.responseHeadersToAdd);
  if (r.requestHeadersToAdd.length) out.requestHeadersToAdd = headers(r.requestHeadersToAdd);
  if (r.rawBody?.length) out.rawBody = r.rawBody.toString("base64");
  if (r.dynamicMetadata) out.dynamicMetadata = r.dynamicMetadata;
  return out;
}
