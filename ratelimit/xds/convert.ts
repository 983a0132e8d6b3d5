// xDS resources → the rule model. Each RateLimitConfig is rendered as the YAML document
// a file would hold (JSON, which the YAML loader reads) and built by the same loader, so
// xDS and files share one validation with the same error texts. The proto has no
// value_to_metric or share_threshold.

import type { Any } from "../../proto/gen/google/protobuf/any.js";
import {
  RateLimitConfig as RateLimitConfigProto,
  type RateLimitDescriptor,
  RateLimitUnit,
} from "../../proto/gen/ratelimit/config/ratelimit/v3/rls_conf.js";
import { buildConfig, ConfigError, type ConfigFile, type RateLimitConfig } from "../config/rules.js";

export const RATE_LIMIT_CONFIG_TYPE_URL = "type.googleapis.com/ratelimit.config.ratelimit.v3.RateLimitConfig";

function descriptorDoc(d: RateLimitDescriptor): Record<string, unknown> {
  const out: Record<string, unknown> = { key: d.key };
  if (d.value !== "") out.value = d.value;
  if (d.rateLimit) {
    const p = d.rateLimit;
    const rl: Record<string, unknown> = { requests_per_unit: p.requestsPerUnit };
    // UNKNOWN is "no unit": fine for unlimited rules, an invalid unit otherwise.
    if (p.unit !== RateLimitUnit.UNKNOWN || !p.unlimited) rl.unit = RateLimitUnit[p.unit] ?? `unit ${p.unit}`;
    if (p.unlimited) rl.unlimited = true;
    if (p.name !== "") rl.name = p.name;
    if (p.replaces.length) rl.replaces = p.replaces.map((r) => ({ name: r.name }));
    out.rate_limit = rl;
  }
  if (d.shadowMode) out.shadow_mode = true;
  if (d.detailedMetric) out.detailed_metric = true;
  if (d.quotaMode) out.quota_mode = true;
  if (d.metadata && Object.keys(d.metadata).length) out.metadata = d.metadata;
  if (d.descriptors.length) out.descriptors = d.descriptors.map(descriptorDoc);
  return out;
}

/** The configuration as the file a person would write, named for error texts. */
export function configFileOf(config: RateLimitConfigProto): ConfigFile {
  const doc = { domain: config.domain, descriptors: config.descriptors.map(descriptorDoc) };
  return { name: config.name || config.domain || "unnamed", text: JSON.stringify(doc) };
}

/** Decodes and builds every resource of one response; throws ConfigError naming the first problem. */
export function buildXdsConfig(resources: readonly Any[], mergeDomainConfig: boolean): RateLimitConfig {
  const files = resources.map((r, i) => {
    if (r.typeUrl !== RATE_LIMIT_CONFIG_TYPE_URL)
      throw new ConfigError(
        `resource ${i}: unexpected type ${r.typeUrl} (expected ${RATE_LIMIT_CONFIG_TYPE_URL})`,
      );
    try {
      return configFileOf(RateLimitConfigProto.decode(r.value));
    } catch (err) {
      throw new ConfigError(`resource ${i}: cannot decode RateLimitConfig: ${(err as Error).message}`);
    }
  });
  return buildConfig(files, mergeDomainConfig);
}
