// TypeScript shapes of the settings object (what the schema in schema.ts accepts).

export type DefineValue =
  | string
  | boolean
  | string[]
  | { env: string; default?: string | boolean | string[] };
export type InheritMode = "none" | "append" | "prepend";
export type BuildState = "sdist" | "wheel" | "editable" | "metadata_wheel" | "metadata_editable";
export const BUILD_STATES: readonly BuildState[] = [
  "sdist",
  "wheel",
  "editable",
  "metadata_wheel",
  "metadata_editable",
];

export interface CMakeSettings {
  "minimum-version"?: string;
  version?: string;
  args?: string[];
  define?: Record<string, DefineValue>;
  verbose?: boolean;
  "build-type"?: string;
  "source-dir"?: string;
  targets?: string[];
  "toolchain-file"?: string;
  "python-hints"?: boolean;
}

export interface MetadataProvider {
  provider?: string;
  "provider-path"?: string;
  [providerOption: string]: unknown;
}

export interface GenerateItem {
  path: string;
  template?: string;
  "template-path"?: string;
  location?: "install" | "build" | "source";
}

export interface Conditions {
  "backend-version"?: string;
  "python-version"?: string;
  "implementation-name"?: string;
  "implementation-version"?: string;
  "platform-system"?: string;
  "platform-machine"?: string;
  "platform-node"?: string;
  state?: string;
  "from-sdist"?: boolean;
  failed?: boolean;
  "system-cmake"?: string;
  "cmake-wheel"?: boolean;
  "abi-flags"?: string;
  env?: Record<string, string | boolean>;
}

export interface IfTable extends Conditions {
  any?: Conditions;
}

export interface Sections {
  cmake?: CMakeSettings;
  ninja?: { "minimum-version"?: string; version?: string; "make-fallback"?: boolean };
  logging?: { level?: "NOTSET" | "DEBUG" | "INFO" | "WARNING" | "ERROR" | "CRITICAL" };
  sdist?: {
    include?: string[];
    exclude?: string[];
    "inclusion-mode"?: "classic" | "default" | "manual";
    reproducible?: boolean;
    cmake?: boolean;
    "resolve-symlinks"?: boolean;
  };
  wheel?: {
    packages?: string[] | Record<string, string>;
    "py-api"?: string;
    "expand-macos-universal-tags"?: boolean;
    "install-dir"?: string;
    "license-files"?: string[];
    cmake?: boolean;
    platlib?: boolean;
    exclude?: string[];
    "build-tag"?: string;
    tags?: string[];
  };
  backport?: { "find-python"?: string };
  editable?: { mode?: "redirect" | "inplace"; verbose?: boolean; rebuild?: boolean };
  build?: { "tool-args"?: string[]; targets?: string[]; verbose?: boolean; requires?: string[] };
  install?: { components?: string[]; strip?: boolean };
  generate?: GenerateItem[];
  messages?: { "after-failure"?: string; "after-success"?: string };
  search?: { "site-packages"?: boolean };
  metadata?: Partial<Record<string, MetadataProvider>>;
  "strict-config"?: boolean;
  experimental?: boolean;
  "minimum-version"?: string;
  "build-dir"?: string;
}

export interface Override extends Sections {
  if: IfTable;
  inherit?: Partial<Record<string, Record<string, InheritMode>>>;
  fail?: boolean;
}

/** The [tool.scikit-build] table. */
export interface Settings extends Sections {
  overrides?: Override[];
}

/** Settings after overrides are applied and defaults filled in (cmake.define values resolved to strings). */
export interface EffectiveSettings extends Omit<Sections, "cmake"> {
  cmake: Omit<CMakeSettings, "define" | "minimum-version" | "verbose" | "targets"> & {
    define: Record<string, string>;
  };
}
