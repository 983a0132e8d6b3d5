// RESPONSE_DYNAMIC_METADATA: the response's dynamic metadata (a Struct Envoy can put
// into its access logs) describing the request as the reference does: the domain, each
// descriptor's entries as "key=value" (with its limit override and hits_addend when
// sent), the request's hits_addend when not 0, and the metadata of the rules whose
// descriptors passed, merged (the first rule wins a conflicting key; maps merge deeply).

import type { RateLimitDescriptor } from "../../proto/gen/envoy/extensions/common/ratelimit/v3/ratelimit.js";
import type { RateLimitRequest } from "../../proto/gen/envoy/service/ratelimit/v3/rls.js";
import { RateLimitUnit, rateLimitUnitToJSON } from "../../proto/gen/envoy/type/v3/ratelimit_unit.js";

type Struct = Record<string, unknown>;

/** `passed`: the metadata of the rule of each descriptor that was not over its limit. */
export function responseMetadata(request: RateLimitRequest, passed: (Struct | undefined)[]): Struct {
  const out: Struct = {
    domain: request.domain,
    descriptors: request.descriptors.map(descriptorStruct),
  };
  if (request.hitsAddend !== 0) out.hitsAddend = request.hitsAddend;
  let merged: Struct | undefined;
  for (const m of passed) {
    if (!m) continue;
    merged ??= {};
    mergeInto(merged, m);
  }
  if (merged && Object.keys(merged).length) out.metadata = merged;
  return out;
}

function descriptorStruct(d: RateLimitDescriptor): Struct {
  const out: Struct = { entries: d.entries.map((e) => `${e.key}=${e.value}`) };
  // The override in protobuf text form, as the reference prints it (without Go's random spacing).
  if (d.limit) {
    const fields: string[] = [];
    if (d.limit.requestsPerUnit !== 0) fields.push(`requests_per_unit:${d.limit.requestsPerUnit}`);
    if (d.limit.unit !== RateLimitUnit.UNKNOWN) fields.push(`unit:${rateLimitUnitToJSON(d.limit.unit)}`);
    out.limit = fields.join(" ");
  }
  if (d.hitsAddend !== undefined) out.hitsAddend = Number(d.hitsAddend);
  return out;
}

function isStruct(v: unknown): v is Struct {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Copies `src` into `dest` where `dest` has no value; two maps under one key merge. */
function mergeInto(dest: Struct, src: Struct): void {
  for (const [k, v] of Object.entries(src)) {
    const have = dest[k];
    if (have === undefined) dest[k] = isStruct(v) ? structuredClone(v) : v;
    else if (isStruct(have) && isStruct(v)) mergeInto(have, v);
  }
}
