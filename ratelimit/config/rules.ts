// Rule configuration: the YAML documents (one domain each) parsed, validated and
// built into one lookup tree per domain. Error texts follow the reference service
// ("<config name>: <message>"), so existing tooling that greps them keeps working.

import {
  isMap,
  isScalar,
  isSeq,
  LineCounter,
  type Node,
  parseAllDocuments,
  type Scalar,
  type YAMLMap,
} from "yaml";

export const UNITS = ["SECOND", "MINUTE", "HOUR", "DAY", "WEEK", "MONTH", "YEAR"] as const;
export type Unit = (typeof UNITS)[number];

/** Seconds in one window of each unit; windows are aligned to the Unix epoch (UTC). */
export const UNIT_SECONDS: Record<Unit, number> = {
  SECOND: 1,
  MINUTE: 60,
  HOUR: 3600,
  DAY: 86_400,
  WEEK: 604_800,
  MONTH: 2_592_000,
  YEAR: 31_536_000,
};

export interface RateLimitRule {
  /** `domain.key_value.key…`: the composite key, also the default stats key. */
  fullKey: string;
  requestsPerUnit: number;
  /** Undefined only for unlimited rules. */
  unit: Unit | undefined;
  unlimited: boolean;
  shadowMode: boolean;
  quotaMode: boolean;
  name: string;
  replaces: string[];
  /** The descriptor's `metadata` map (returned with RESPONSE_DYNAMIC_METADATA); undefined when empty. */
  metadata: Record<string, unknown> | undefined;
}

export interface DescriptorNode {
  key: string;
  /** The configured value (exact or wildcard pattern); undefined when the entry has none. */
  value: string | undefined;
  /** Fixed parts of a wildcard pattern (split on `*`); undefined when the value has no `*`. */
  wildcardParts: string[] | undefined;
  limit: RateLimitRule | undefined;
  shadowMode: boolean;
  detailedMetric: boolean;
  valueToMetric: boolean;
  shareThreshold: boolean;
  level: DescriptorLevel;
}

/** One nesting level: entries by `key` or `key_value`, plus the wildcard entries in config order. */
export interface DescriptorLevel {
  byKey: Map<string, DescriptorNode>;
  /**
   * `byKey` by a request entry's key, then value: `exact.get(k)?.get(v)` is `byKey.get(`${k}_${v}`)`
   * without building that string on every call. Each composite is entered under every
   * split at one of its `_`.
   */
  exact: Map<string, Map<string, DescriptorNode>>;
  wildcards: DescriptorNode[];
}

export interface DomainConfig {
  domain: string;
  level: DescriptorLevel;
}

export interface RateLimitConfig {
  domains: Map<string, DomainConfig>;
}

/** A configuration file: its name (used in error texts) and its text. */
export interface ConfigFile {
  name: string;
  text: string;
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

const ALLOWED_KEYS = new Set([
  "domain",
  "key",
  "value",
  "descriptors",
  "rate_limit",
  "unit",
  "requests_per_unit",
  "unlimited",
  "shadow_mode",
  "quota_mode",
  "name",
  "replaces",
  "detailed_metric",
  "value_to_metric",
  "share_threshold",
  "metadata",
]);

const newLevel = (): DescriptorLevel => ({ byKey: new Map(), exact: new Map(), wildcards: [] });

function addNode(level: DescriptorLevel, composite: string, node: DescriptorNode): void {
  level.byKey.set(composite, node);
  for (let i = composite.indexOf("_"); i >= 0; i = composite.indexOf("_", i + 1)) {
    const key = composite.slice(0, i);
    let values = level.exact.get(key);
    if (!values) {
      values = new Map();
      level.exact.set(key, values);
    }
    values.set(composite.slice(i + 1), node);
  }
}

/** Builds the configuration from all files together; the first problem found is thrown. */
export function buildConfig(files: ConfigFile[], mergeDomainConfig: boolean): RateLimitConfig {
  const config: RateLimitConfig = { domains: new Map() };
  for (const file of files) addFile(config, file, mergeDomainConfig);
  return config;
}

function addFile(config: RateLimitConfig, file: ConfigFile, merge: boolean): void {
  const fail = (msg: string): never => {
    throw new ConfigError(`${file.name}: ${msg}`);
  };
  lines = new LineCounter();
  const docs = parseAllDocuments(file.text, { version: "1.1", uniqueKeys: false, lineCounter: lines });
  const docList = Array.isArray(docs) ? docs : [];
  const doc = docList[0];
  if (doc?.errors.length) fail(`error loading config file: ${yamlErrorText(doc.errors[0]!)}`);
  const root = doc?.contents ?? null;
  if (root !== null) validateKeys(root, fail);
  if (root !== null && !isMap(root))
    fail("error loading config file: the document must be a map with domain and descriptors");
  const map = root as YAMLMap | null;

  const domain = map ? readString(map, "domain", fail) : "";
  if (!domain) fail("config file cannot have empty domain");
  let domainConfig = config.domains.get(domain);
  if (domainConfig && !merge) fail(`duplicate domain '${domain}' in config file`);
  if (!domainConfig) {
    domainConfig = { domain, level: newLevel() };
    config.domains.set(domain, domainConfig);
  }
  const descriptors = map ? field(map, "descriptors") : undefined;
  loadDescriptors(domainConfig.level, `${domain}.`, descriptors as Node | undefined, fail);
}

function yamlErrorText(err: {
  message: string;
  linePos?: [{ line: number; col: number }, ...unknown[]];
}): string {
  const first = err.message.split("\n")[0] ?? err.message;
  return (
    first.replace(/ at line \d+, column \d+:?$/, "") + (err.linePos ? ` (line ${err.linePos[0].line})` : "")
  );
}

/** The reference's key check: one whitelist for every level; leaves must be strings, ints, bools or null. */
function validateKeys(node: Node, fail: (msg: string) => never): void {
  if (isMap(node)) {
    for (const pair of node.items) {
      const k = pair.key as Node | null;
      if (!isScalar(k) || typeof k.value !== "string") {
        fail(
          `config error, key is not of type string: ${isScalar(k) ? String(k.source ?? k.value) : String(k)}`,
        );
      }
      const key = (k as Scalar<string>).value;
      if (!ALLOWED_KEYS.has(key)) fail(`config error, unknown key '${key}'`);
      if (key === "metadata") continue;
      if (pair.value !== null && pair.value !== undefined) validateKeys(pair.value as Node, fail);
    }
  } else if (isSeq(node)) {
    for (const item of node.items) {
      if (!isMap(item)) {
        const text = isScalar(item) ? String((item as Scalar).value) : String(item);
        fail(`config error, yaml file contains list of type other than map: ${text}`);
      }
      validateKeys(item as Node, fail);
    }
  } else if (isScalar(node)) {
    const v = node.value;
    const ok =
      v === null ||
      typeof v === "string" ||
      typeof v === "boolean" ||
      (typeof v === "number" && Number.isSafeInteger(v) && !/[.eE]/.test(String(node.source ?? "")));
    if (!ok) fail("error checking config");
  }
}

// Line positions of the file being built (building is synchronous, one file at a time).
let lines: LineCounter | undefined;

function lineOf(node: Node | undefined | null): string {
  const range = (node as { range?: [number, number, number] } | null)?.range;
  return range && lines ? ` (line ${lines.linePos(range[0]).line})` : "";
}

/** The value of `key`; when a map repeats a key the last one wins, as in the reference's YAML reader. */
function field(map: YAMLMap, key: string): Node | undefined {
  for (let i = map.items.length - 1; i >= 0; i--) {
    const pair = map.items[i]!;
    if (isScalar(pair.key) && pair.key.value === key) return (pair.value ?? undefined) as Node | undefined;
  }
  return undefined;
}

/** How a bad scalar is shown in an error: strings quoted, other values as written. */
function shown(node: Node | undefined): string {
  if (!isScalar(node)) return "a non-scalar value";
  return typeof node.value === "string" ? JSON.stringify(node.value) : String(node.source ?? node.value);
}

function scalarAt(map: YAMLMap, key: string): Scalar | undefined {
  const node = field(map, key);
  if (node === undefined || node === null) return undefined;
  if (!isScalar(node)) return node as unknown as Scalar;
  return node;
}

function readString(map: YAMLMap, key: string, fail: (msg: string) => never): string {
  const node = scalarAt(map, key);
  if (node === undefined || node.value === null || node.value === undefined) return "";
  if (!isScalar(node)) fail(`error loading config file: ${key}${lineOf(node)}: expected a string`);
  return typeof node.value === "string" ? node.value : String(node.source ?? node.value);
}

function readBool(map: YAMLMap, key: string, fail: (msg: string) => never): boolean {
  const node = scalarAt(map, key);
  if (node === undefined || node.value === null) return false;
  if (!isScalar(node) || typeof node.value !== "boolean") {
    fail(`error loading config file: ${key}${lineOf(node)}: cannot unmarshal \`${shown(node)}\` into bool`);
  }
  return node.value as boolean;
}

function readUint32(map: YAMLMap, key: string, fail: (msg: string) => never): number {
  const node = scalarAt(map, key);
  if (node === undefined || node.value === null) return 0;
  const v = isScalar(node) ? node.value : undefined;
  if (typeof v !== "number" || !Number.isInteger(v) || v < 0 || v > 0xffff_ffff) {
    fail(
      `error loading config file: ${key}${lineOf(node)}: cannot unmarshal \`${shown(node)}\` into uint32 (expected an integer from 0 to 4294967295)`,
    );
  }
  return v as number;
}

/** A descriptor's `metadata`: any map (nested maps and lists included), kept as plain data. */
function readMetadata(map: YAMLMap, fail: (msg: string) => never): Record<string, unknown> | undefined {
  const node = field(map, "metadata");
  if (node === undefined || node === null || (isScalar(node) && node.value === null)) return undefined;
  if (!isMap(node)) fail(`error loading config file: metadata${lineOf(node)}: expected a map`);
  const value = (node as YAMLMap).toJSON() as Record<string, unknown>;
  return Object.keys(value).length ? value : undefined;
}

function loadDescriptors(
  level: DescriptorLevel,
  parentKey: string,
  node: Node | undefined,
  fail: (msg: string) => never,
): void {
  if (node === undefined || node === null || (isScalar(node) && node.value === null)) return;
  if (!isSeq(node)) fail(`error loading config file: descriptors${lineOf(node)}: expected a list`);
  for (const item of (node as { items: unknown[] }).items) {
    const d = item as YAMLMap;
    const key = readString(d, "key", fail);
    if (!key) fail("descriptor has empty key");
    const hasValue = field(d, "value") !== undefined && scalarAt(d, "value")?.value !== null;
    const value = hasValue ? readString(d, "value", fail) : undefined;
    const finalKey = value !== undefined && value !== "" ? `${key}_${value}` : key;
    const fullKey = parentKey + finalKey;
    if (level.byKey.has(finalKey)) fail(`duplicate descriptor composite key '${fullKey}'`);

    let limit: RateLimitRule | undefined;
    const rl = field(d, "rate_limit");
    const shadowMode = readBool(d, "shadow_mode", fail);
    const quotaMode = readBool(d, "quota_mode", fail);
    if (rl !== undefined && rl !== null && !(isScalar(rl) && rl.value === null)) {
      if (!isMap(rl)) fail(`error loading config file: rate_limit${lineOf(rl)}: expected a map`);
      const rlMap = rl as YAMLMap;
      const unlimited = readBool(rlMap, "unlimited", fail);
      const unitText = readString(rlMap, "unit", fail);
      const upper = unitText.toUpperCase();
      const validUnit = (UNITS as readonly string[]).includes(upper);
      if (unlimited) {
        if (validUnit) fail("should not specify rate limit unit when unlimited");
      } else if (!validUnit) fail(`invalid rate limit unit '${unitText}'`);
      const name = readString(rlMap, "name", fail);
      const replaces: string[] = [];
      const rep = field(rlMap, "replaces");
      if (rep !== undefined && rep !== null && !(isScalar(rep) && rep.value === null)) {
        if (!isSeq(rep)) fail(`error loading config file: replaces${lineOf(rep)}: expected a list`);
        for (const r of (rep as { items: unknown[] }).items) {
          const rname = readString(r as YAMLMap, "name", fail);
          if (rname === "") fail("should not have an empty replaces entry");
          if (rname === name) fail("replaces should not contain name of same descriptor");
          replaces.push(rname);
        }
      }
      limit = {
        fullKey,
        requestsPerUnit: readUint32(rlMap, "requests_per_unit", fail),
        unit: validUnit ? (upper as Unit) : undefined,
        unlimited,
        shadowMode,
        quotaMode,
        name,
        replaces,
        metadata: readMetadata(d, fail),
      };
    }

    const shareThreshold = readBool(d, "share_threshold", fail);
    const isWildcard = value?.includes("*") ?? false;
    if (shareThreshold && !isWildcard) {
      fail(
        `share_threshold can only be used with wildcard values (containing '*'), but found key '${finalKey}'`,
      );
    }
    const entry: DescriptorNode = {
      key,
      value,
      wildcardParts: isWildcard ? value!.split("*") : undefined,
      limit,
      shadowMode,
      detailedMetric: readBool(d, "detailed_metric", fail),
      valueToMetric: readBool(d, "value_to_metric", fail),
      shareThreshold,
      level: newLevel(),
    };
    addNode(level, finalKey, entry);
    if (isWildcard) level.wildcards.push(entry);
    loadDescriptors(entry.level, `${fullKey}.`, field(d, "descriptors"), fail);
  }
}

/** One line per rule, like the reference's /rlconfig dump. */
export function dumpConfig(config: RateLimitConfig): string {
  const lines: string[] = [];
  const walk = (level: DescriptorLevel) => {
    for (const node of level.byKey.values()) {
      const l = node.limit;
      if (l) {
        lines.push(
          `${l.fullKey}: unit=${l.unit ?? "UNKNOWN"} requests_per_unit=${l.requestsPerUnit}, shadow_mode: ${l.shadowMode}, quota_mode: ${l.quotaMode}${l.unlimited ? ", unlimited: true" : ""}`,
        );
      }
      walk(node.level);
    }
  };
  for (const d of config.domains.values()) walk(d.level);
  return lines.length ? `${lines.join("\n")}\n` : "";
}
