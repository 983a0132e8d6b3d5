// The JSON Schema (draft-07) of the [tool.scikit-build] settings object, written from part A of
// spec/settings-and-entity-rest.md. It is the single source of keys, types, enums, bounds and
// defaults: the validator compiles it once with ajv, the defaults filler and the did-you-mean
// index walk it.
//
// Besides standard keywords it uses four annotations of ours, registered as ajv keywords in
// compile.ts (other validators may ignore them):
//   overrideOnly     the key may only be set inside [[tool.scikit-build.overrides]]
//   pep440Specifier  the string is a PEP 440 specifier set ("" allowed); {also: [...]} adds literals
//   pep440Version    the string is a PEP 440 version; {also: [...]} adds literals
//   pythonRegex      the string is a regular expression (Python syntax, searched unanchored)

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
    "build-type": { ...str, default: "Release" },
    "source-dir": { ...str, default: "." },
    targets: { ...strList, deprecated: true, description: "deprecated since 0.10; use build.targets" },
    "toolchain-file": { ...str, overrideOnly: true, description: "cross-compilation toolchain file" },
    "python-hints": { ...bool, default: true },
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
    "inclusion-mode": { enum: ["classic", "default", "manual"] },
    reproducible: { ...bool, default: true },
    cmake: { ...bool, default: false },
    "resolve-symlinks": { ...bool, default: true },
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
    rebuild: { ...bool, default: false },
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

const install = section({ components: strList, strip: bool }, "the install step");

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
} as const;

export type ConditionKey = keyof typeof CONDITION_KINDS;

const conditionProperties: Record<string, Schema> = {};
for (const [key, kind] of Object.entries(CONDITION_KINDS)) {
  if (kind === "specifier") conditionProperties[key] = { ...str, pep440Specifier: true };
  else if (kind === "regex") conditionProperties[key] = { ...str, pythonRegex: true };
  else if (kind === "bool") conditionProperties[key] = bool;
  else
    conditionProperties[key] = {
      type: "object",
      minProperties: 1,
      additionalProperties: { type: ["string", "boolean"], pythonRegex: true },
    };
}

/** The list and table keys an override may combine with the earlier value through `inherit`. */
export const INHERITABLE = {
  cmake: ["args", "define", "targets"],
  sdist: ["include", "exclude"],
  wheel: ["packages", "license-files", "exclude", "tags"],
  build: ["tool-args", "targets", "requires"],
  install: ["components"],
} as const;

const inheritMode: Schema = { enum: ["none", "append", "prepend"], default: "none" };

const inherit: Schema = section(
  Object.fromEntries(
    Object.entries(INHERITABLE).map(([sec, keys]) => [
      sec,
      section(Object.fromEntries(keys.map((k) => [k, { $ref: "#/definitions/inherit-mode" }])), sec),
    ]),
  ),
  "how lists and tables of the override combine with the earlier value",
);

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

const topProperties: Record<string, Schema> = {
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
  metadata,
  "strict-config": { ...bool, default: true },
  experimental: { ...bool, default: false },
  "minimum-version": { ...str, pep440Version: { also: ["build-system.requires"] } },
  "build-dir": { ...str, default: "" },
  fail: { ...bool, overrideOnly: true, description: "fail the build at once (overrides only)" },
};

/** Keys an override may set besides `if` and `inherit`. */
export const OVERRIDABLE_KEYS = Object.keys(topProperties);

const overrideItem: Schema = {
  type: "object",
  required: ["if"],
  minProperties: 2,
  additionalProperties: false,
  properties: {
    if: { $ref: "#/definitions/if" },
    inherit,
    ...Object.fromEntries(OVERRIDABLE_KEYS.map((k) => [k, { $ref: `#/properties/${k}` }])),
  },
};

export const SCHEMA_ID = "https://event-traffic-platform.local/schemas/skbuild-settings.schema.json";

export const settingsSchema: Schema = {
  $schema: "http://json-schema.org/draft-07/schema#",
  $id: SCHEMA_ID,
  title: "[tool.scikit-build] settings",
  type: "object",
  additionalProperties: false,
  definitions: {
    "define-value": defineValue,
    "metadata-provider": {
      type: "object",
      properties: { provider: str, "provider-path": str },
      description: "provider tables may hold provider-specific keys",
    },
    conditions: {
      type: "object",
      minProperties: 1,
      additionalProperties: false,
      properties: conditionProperties,
    },
    if: {
      type: "object",
      minProperties: 1,
      additionalProperties: false,
      properties: { ...conditionProperties, any: { $ref: "#/definitions/conditions" } },
      dependencies: { any: { maxProperties: 1 } },
    },
    "inherit-mode": inheritMode,
  },
  properties: {
    ...topProperties,
    overrides: { type: "array", items: overrideItem },
  },
};

/** The sub-schema of a top-level section (or undefined). */
export function sectionSchema(key: string): Schema | undefined {
  return topProperties[key];
}

/** Property names of an object schema, in declaration order. */
export function propertyNames(schema: Schema | undefined): string[] {
  const props = schema?.properties as Record<string, Schema> | undefined;
  return props ? Object.keys(props) : [];
}
