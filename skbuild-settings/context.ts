// The build context overrides are evaluated against, and how to take it from this machine.
import os from "node:os";
import type { BuildState } from "./types.js";

export interface BuildContext {
  /** Version of the build backend (default SPEC_BACKEND_VERSION). */
  backendVersion?: string;
  /** Two-part Python version, "3.12". */
  pythonVersion?: string;
  /** sys.implementation.name, e.g. "cpython", "pypy". */
  implementationName?: string;
  /** Interpreter version as in PEP 508 implementation_version, e.g. "3.12.1", "3.13.0a1". */
  implementationVersion?: string;
  /** sys.platform, e.g. "linux", "darwin", "win32". */
  platformSystem?: string;
  /** platform.machine(), e.g. "x86_64", "arm64", "AMD64". */
  platformMachine?: string;
  /** platform.node(): the host name. */
  platformNode?: string;
  state?: BuildState;
  /** The build runs from an unpacked sdist (default false). */
  fromSdist?: boolean;
  /** This is the retry after a failed build (default false). */
  failed?: boolean;
  /** CMake version(s) found on the system; [] means none. */
  systemCmake?: string | string[];
  /** A CMake wheel is known for this system. */
  cmakeWheel?: boolean;
  /** Sorted ABI flags, e.g. "" or "t" (free-threaded). */
  abiFlags?: string;
  /** Environment variables (default: none). */
  env?: Record<string, string | undefined>;
  /**
   * Declared config-settings after resolution (variable > `-C` > default); evaluate fills it
   * from `configSettingArgs` and the document's declarations.
   */
  configSettings?: Record<string, string | boolean | undefined>;
  /** `-C name=value` config-settings given to the build (for declared config-settings, 1.1). */
  configSettingArgs?: Record<string, string>;
}

/** Node's platform names mapped to Python's sys.platform. */
const SYS_PLATFORM: Partial<Record<NodeJS.Platform, string>> = {
  linux: "linux",
  darwin: "darwin",
  win32: "win32",
  aix: "aix",
  sunos: "sunos5",
  freebsd: "freebsd",
  openbsd: "openbsd",
  netbsd: "netbsd",
  cygwin: "cygwin",
  android: "android",
};

/** platform-system, platform-machine and platform-node of this machine, plus (optionally) its environment. */
export function hostContext(withEnv = true): BuildContext {
  return {
    platformSystem: SYS_PLATFORM[process.platform] ?? process.platform,
    platformMachine: os.machine(),
    platformNode: os.hostname(),
    ...(withEnv ? { env: { ...process.env } } : {}),
  };
}

/**
 * Truthy environment values (docs/spec-rules.md#truthy-environment-values): true, on, yes, y, t (any
 * case) or a number above 0.
 */
export function isTruthy(value: string | undefined): boolean {
  const v = (value ?? "").trim().toLowerCase();
  if (["true", "on", "yes", "y", "t"].includes(v)) return true;
  if (/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/.test(v)) return Number(v) > 0;
  return false;
}

/**
 * The backend's reading of a string as a boolean in `config-setting` (and its `if.env` rule):
 * digits are their number, n/no/off/false/f (any case) and "" are false, anything else true.
 */
export function backendTruthy(value: string): boolean {
  const v = value.toLowerCase();
  if (v === "") return false;
  if (/^\d+$/.test(v)) return Number(v) !== 0;
  return !["n", "no", "off", "false", "f"].includes(v);
}

/** How the backend turns a string into a boolean for settings: false only for 0/false/off/no/"". */
export function settingTruthy(value: string): boolean {
  return !["0", "false", "off", "no", ""].includes(value.trim().toLowerCase());
}
