// The JSON Schema (draft-07) of the [tool.scikit-build] settings object, written from the specified
// settings (docs/spec-rules.md#build-settings-schema), in two generations (lines.ts): the specified
// 0.12 line and the current 1.x line, which adds keys, condition kinds and inherit entries. It is the
// single source of keys, types, enums, bounds and defaults: the validator compiles it once with ajv,
// the defaults filler and the did-you-mean index walk it.
//
// Besides standard keywords it uses four annotations of ours, registered as ajv keywords in
// compile.ts (other validators may ignore them):
//   overrideOnly     the key may only be set inside [[tool.scikit-build.overrides]]
//   pep440Specifier  the string is a PEP 440 specifier set ("" allowed); {also: [...]} adds literals
//   pep440Version    the string is a PEP 440 version; {also: [...]} adds literals
//   pythonRegex      the string is a regular expression (Python syntax, searched unanchored)

import type { SettingsLine } from "./lines.js";

type Schema = Record<string, unknown>;

const str: Schema = { type: "string" };
const bool: Schema = { type: "boolean" };
const strList: Schema = { type: "array", items: { type: "string" } };
const nonEmpty: Schema = { type: "string", minLength: 1 };

const section = (properties: Record<string, Schema>, description: string): Schema => ({
  type: "object",
  description,
  additionalProperties: false,
  properties,
});

/** A value of cmake.define: a string, a boolean, a list of strings, or {env, default}. */
const defineValue: Schema = {
  if: { type: "object" },
  // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then/else keyword
  then: {
    type: "object",
    additionalProperties: false,
    required: ["env"],
    properties: {
      env: { ...nonEmpty, description: "environment variable to read the value from" },
      default: { type: ["string", "boolean", "array"], items: { type: "string" } },
    },
  },
  else: { type: ["string", "boolean", "array"], items: { type: "string" } },
};

/** sdist/wheel.force-include (1.x): destination path -> source path. */
const forceInclude: Schema = {
  type: "object",
  propertyNames: { minLength: 1 },
  additionalProperties: { type: "string" },
};

/** The sections of one line of settings. */
function sections(modern: boolean): Record<string, Schema> {
  const cmake = section(
    {
      "minimum-version": {
        ...str,
        pep440Version: true,
        deprecated: true,
        description: "deprecated since 0.8; use cmake.version",
      },
      version: {
        ...str,
        pep440Specifier: { also: ["CMakeLists.txt"] },
        description: "allowed CMake versions as a PEP 440 specifier set",
      },
      args: { ...strList, description: "extra arguments for the configure step" },
      define: {
        type: "object",
        description: "CMake definitions (additive table)",
        propertyNames: { minLength: 1 },
        additionalProperties: { $ref: "#/definitions/define-value" },
      },
      verbose: { ...bool, deprecated: true, description: "deprecated since 0.10; use build.verbose" },
      "build-type": modern
        ? { type: ["string", "array"], items: { type: "string" }, default: "Release" }
        : { ...str, default: "Release" },
      "source-dir": { ...str, default: "." },
      targets: { ...strList, deprecated: true, description: "deprecated since 0.10; use build.targets" },
      "toolchain-file": { ...str, overrideOnly: true, description: "cross-compilation toolchain file" },
      "python-hints": { ...bool, default: true },
      ...(modern ? { fresh: { ...bool, default: false, description: "configure from scratch (1.1)" } } : {}),
    },
    "CMake configuration and targets",
  );

  const ninja = section(
    {
      "minimum-version": {
        ...str,
        pep440Version: true,
        deprecated: true,
        description: "deprecated since 0.8; use ninja.version",
      },
      version: { ...str, pep440Specifier: true, default: ">=1.5" },
      "make-fallback": { ...bool, default: true },
    },
    "the Ninja build tool",
  );

  const logging = section(
    {
      level: { enum: ["NOTSET", "DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"], default: "WARNING" },
    },
    "logging",
  );

  const sdist = section(
    {
      include: { ...strList, description: "gitignore-style patterns to include" },
      exclude: { ...strList, description: "gitignore-style patterns to exclude" },
      "inclusion-mode": { enum: ["classic", "default", "manual", ...(modern ? ["explicit"] : [])] },
      reproducible: { ...bool, default: true },
      cmake: { ...bool, default: false },
      "resolve-symlinks": modern
        ? { enum: ["all", "external", "none", "classic", "error"] }
        : { ...bool, default: true },
      ...(modern ? { "force-include": forceInclude } : {}),
    },
    "source distribution contents",
  );

  const wheel = section(
    {
      packages: {
        type: ["array", "object"],
        items: { type: "string" },
        additionalProperties: { type: "string" },
        description: "packages to copy into the wheel: a list, or a table of wheel path to source path",
      },
      "py-api": { ...str, default: "" },
      "expand-macos-universal-tags": { ...bool, default: false },
      "install-dir": { ...str, default: "" },
      "license-files": strList,
      cmake: { ...bool, default: true },
      platlib: bool,
      exclude: strList,
      "build-tag": { ...str, default: "" },
      tags: {
        type: "array",
        items: { type: "string", pattern: "^[^-\\s]+-[^-\\s]+-[^-\\s]+$" },
        overrideOnly: true,
        description: "forced wheel tags, <interpreter>-<abi>-<platform>",
      },
      ...(modern ? { "force-include": forceInclude, reproducible: { ...bool, default: false } } : {}),
    },
    "wheel contents and tags",
  );

  const backport = section(
    { "find-python": { ...str, pep440Version: { also: [""] }, default: "3.26.1" } },
    "backports",
  );

  const editable = section(
    {
      mode: { enum: ["redirect", "inplace"], default: "redirect" },
      verbose: { ...bool, default: true },
      // 1.x leaves rebuild unset by default (rebuild-dir also turns a persistent install on).
      rebuild: modern ? bool : { ...bool, default: false },
      ...(modern ? { "rebuild-dir": { ...str, default: "" } } : {}),
    },
    "editable installs",
  );

  const build = section(
    {
      "tool-args": strList,
      targets: strList,
      verbose: { ...bool, default: false },
      requires: strList,
    },
    "the build step",
  );

  const install = section(
    { components: strList, strip: bool, ...(modern ? { targets: strList } : {}) },
    "the install step",
  );

  const generateItem: Schema = {
    type: "object",
    additionalProperties: false,
    required: ["path"],
    properties: {
      path: nonEmpty,
      template: nonEmpty,
      "template-path": nonEmpty,
      location: { enum: ["install", "build", "source"], default: "install" },
    },
    oneOf: [{ required: ["template"] }, { required: ["template-path"] }],
  };

  const messages = section(
    { "after-failure": { ...str, default: "" }, "after-success": { ...str, default: "" } },
    "messages printed after the build",
  );

  const search = section({ "site-packages": { ...bool, default: true } }, "CMake search paths");
  return {
    cmake,
    ninja,
    logging,
    sdist,
    wheel,
    backport,
    editable,
    build,
    install,
    generate: { type: "array", items: generateItem },
    messages,
    search,
  };
}

/** The metadata fields that may be provided dynamically. */
export const METADATA_FIELDS = [
  "version",
  "description",
  "license",
  "readme",
  "requires-python",
  "dependencies",
  "optional-dependencies",
  "entrypoints",
  "authors",
  "maintainers",
  "urls",
  "classifiers",
  "keywords",
  "scripts",
  "gui-scripts",
] as const;

const metadata = section(
  Object.fromEntries(METADATA_FIELDS.map((f) => [f, { $ref: "#/definitions/metadata-provider" }])),
  "dynamic metadata providers",
);

/** Condition kinds of overrides[].if, with how each is matched. */
export const CONDITION_KINDS = {
  "backend-version": "specifier",
  "scikit-build-version": "specifier",
  "python-version": "specifier",
  "implementation-name": "regex",
  "implementation-version": "specifier",
  "platform-system": "regex",
  "platform-machine": "regex",
  "platform-node": "regex",
  state: "regex",
  "from-sdist": "bool",
  failed: "bool",
  "system-cmake": "specifier",
  "cmake-wheel": "bool",
  "abi-flags": "regex",
  env: "env",
  "config-setting": "config-setting",
} as const;

export type ConditionKey = keyof typeof CONDITION_KINDS;

/** Condition kinds only the 1.x line knows. */
const MODERN_CONDITIONS = new Set<string>(["config-setting"]);

function conditionProperties(modern: boolean): Record<string, Schema> {
  const out: Record<string, Schema> = {};
  for (const [key, kind] of Object.entries(CONDITION_KINDS)) {
    if (!modern && MODERN_CONDITIONS.has(key)) continue;
    if (kind === "specifier") out[key] = { ...str, pep440Specifier: true };
    else if (kind === "regex") out[key] = { ...str, pythonRegex: true };
    else if (kind === "bool") out[key] = bool;
    else
      out[key] = {
        type: "object",
        minProperties: 1,
        additionalProperties: { type: ["string", "boolean"], pythonRegex: true },
      };
  }
  return out;
}

/** The list and table keys an override may combine with the earlier value through `inherit`. */
export const INHERITABLE = {
  cmake: ["args", "define", "targets"],
  sdist: ["include", "exclude"],
  wheel: ["packages", "license-files", "exclude", "tags"],
  build: ["tool-args", "targets", "requires"],
  install: ["components"],
} as const;

/** What the 1.x line adds to INHERITABLE. */
const MODERN_INHERITABLE: Record<string, string[]> = {
  cmake: ["build-type"],
  sdist: ["force-include"],
  wheel: ["force-include"],
  install: ["targets"],
};

function inheritSchema(modern: boolean): Schema {
  return section(
    Object.fromEntries(
      Object.entries(INHERITABLE).map(([sec, keys]) => [
        sec,
        section(
          Object.fromEntries(
            [...keys, ...(modern ? (MODERN_INHERITABLE[sec] ?? []) : [])].map((k) => [
              k,
              { $ref: "#/definitions/inherit-mode" },
            ]),
          ),
          sec,
        ),
      ]),
    ),
    "how lists and tables of the override combine with the earlier value",
  );
}

/** Top-level keys that hold a section object. */
export const SECTION_KEYS = [
  "cmake",
  "ninja",
  "logging",
  "sdist",
  "wheel",
  "backport",
  "editable",
  "build",
  "install",
  "messages",
  "search",
  "metadata",
] as const;

/** The top-level `env` table (1.x): variables set for the CMake processes. */
const envTable: Schema = {
  type: "object",
  propertyNames: { minLength: 1 },
  additionalProperties: {
    if: { type: "object" },
    // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then/else keyword
    then: {
      type: "object",
      additionalProperties: false,
      properties: { env: nonEmpty, default: str, force: { ...bool, default: false } },
    },
    else: str,
  },
};

/** `config-setting` declarations (1.1): project-specific `-C name=value` settings. */
const configSettingDecls: Schema = {
  type: "object",
  propertyNames: { pattern: "^[A-Za-z0-9_-]+(\\.[A-Za-z0-9_-]+)+$" },
  additionalProperties: {
    type: "object",
    additionalProperties: false,
    properties: {
      help: { ...str, default: "" },
      type: { enum: ["str", "bool"], default: "str" },
      default: { type: ["string", "boolean"] },
      env: nonEmpty,
    },
  },
};

function topProperties(modern: boolean): Record<string, Schema> {
  const { generate, ...rest } = sections(modern);
  return {
    ...rest,
    generate: generate!,
    metadata,
    ...(modern ? { env: envTable } : {}),
    "strict-config": { ...bool, default: true },
    experimental: { ...bool, default: false },
    "minimum-version": { ...str, pep440Version: { also: ["build-system.requires"] } },
    "build-dir": { ...str, default: "" },
    fail: { ...bool, overrideOnly: true, description: "fail the build at once (overrides only)" },
    ...(modern
      ? {
          variant: { ...strList, overrideOnly: true },
          "variant-name": { ...strList, overrideOnly: true },
          "variant-label": { ...str, overrideOnly: true },
          "null-variant": { ...bool, overrideOnly: true },
        }
      : {}),
  };
}

/** Keys of an override that are not settings. */
const OVERRIDE_OWN = ["if", "inherit"];

export const SCHEMA_ID = "https://event-traffic-platform.local/schemas/skbuild-settings.schema.json";

function buildSchema(line: SettingsLine): Schema {
  const modern = line !== "0.12";
  const top = topProperties(modern);
  const conditions = conditionProperties(modern);
  const overrideItem: Schema = {
    type: "object",
    required: ["if"],
    minProperties: 2,
    additionalProperties: false,
    properties: {
      if: { $ref: "#/definitions/if" },
      inherit: inheritSchema(modern),
      ...Object.fromEntries(Object.keys(top).map((k) => [k, { $ref: `#/properties/${k}` }])),
    },
  };
  return {
    $schema: "http://json-schema.org/draft-07/schema#",
    $id: `${SCHEMA_ID}#${line}`,
    title: `[tool.scikit-build] settings (scikit-build-core ${line} line)`,
    type: "object",
    additionalProperties: false,
    definitions: {
      "define-value": defineValue,
      "metadata-provider": {
        type: "object",
        properties: { provider: str, "provider-path": str },
        description: "provider tables may hold provider-specific keys",
      },
      conditions: { type: "object", minProperties: 1, additionalProperties: false, properties: conditions },
      if: {
        type: "object",
        minProperties: 1,
        additionalProperties: false,
        properties: {
          ...conditions,
          any: { $ref: "#/definitions/conditions" },
          ...(modern ? { not: { $ref: "#/definitions/conditions" } } : {}),
        },
      },
      "inherit-mode": { enum: ["none", "append", "prepend"], default: "none" },
    },
    properties: {
      ...top,
      ...(modern ? { "config-setting": configSettingDecls } : {}),
      overrides: { type: "array", items: overrideItem },
    },
  };
}

const SCHEMAS: Record<SettingsLine, Schema> = { "0.12": buildSchema("0.12"), "1.x": buildSchema("1.x") };

/** The JSON Schema of one line of settings. */
export function schemaFor(line: SettingsLine): Schema {
  return SCHEMAS[line];
}

/** The schema of the specified line (0.12). */
export const settingsSchema: Schema = SCHEMAS["0.12"];

/** Keys an override may set besides `if` and `inherit`, in a line. */
export function overridableKeys(line: SettingsLine): string[] {
  return Object.keys((SCHEMAS[line].properties as Schema) ?? {}).filter(
    (k) => k !== "overrides" && k !== "config-setting" && !OVERRIDE_OWN.includes(k),
  );
}

/** The sub-schema of a top-level key (or undefined). */
export function sectionSchema(key: string, line: SettingsLine = "0.12"): Schema | undefined {
  return (SCHEMAS[line].properties as Record<string, Schema>)[key];
}

/** Property names of an object schema, in declaration order. */
export function propertyNames(schema: Schema | undefined): string[] {
  const props = schema?.properties as Record<string, Schema> | undefined;
  return props ? Object.keys(props) : [];
}
