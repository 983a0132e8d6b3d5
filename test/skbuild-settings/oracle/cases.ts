// The documents the differential test and the benchmark give to both readers: the shared
// corpus of real projects' settings, and mutations generated from it (typos, wrong types,
// overrides of every condition kind, inherit modes, minimum-version combinations, 1.x keys,
// bytes that are not TOML). Deterministic: the same cases on every run.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { parse, stringify } from "smol-toml";
import { fromRoot } from "../../../common/paths.js";
import type { OracleFacts } from "./upstream.js";

/** The shared corpus, beside the repository (as CI checks it out). */
export const CORPUS_DIR = fromRoot("..", "shared", "conformance", "skbuild-corpus");

/** A build context both readers are run in. */
export interface CaseContext {
  name: string;
  state: "sdist" | "wheel" | "editable" | "metadata_wheel" | "metadata_editable";
  env: Record<string, string>;
  retry: boolean;
  fromSdist: boolean;
  systemCmake: string[];
}

export const CONTEXTS: readonly CaseContext[] = [
  { name: "wheel", state: "wheel", env: {}, retry: false, fromSdist: false, systemCmake: [] },
  {
    name: "sdist-ci",
    state: "sdist",
    env: { CIBUILDWHEEL: "1", CI: "true" },
    retry: false,
    fromSdist: false,
    systemCmake: ["3.28.1"],
  },
  {
    name: "editable-from-sdist",
    state: "editable",
    env: { FOO: "bar", EMPTY: "" },
    retry: false,
    fromSdist: true,
    systemCmake: ["3.18.0"],
  },
  {
    name: "metadata-retry",
    state: "metadata_wheel",
    env: { FLAG: "off", NUM: "0", ODD: "random" },
    retry: true,
    fromSdist: false,
    systemCmake: [],
  },
  {
    name: "metadata-editable",
    state: "metadata_editable",
    env: { FLAG: "yes", CMAKE_ARGS: "-DX=1" },
    retry: false,
    fromSdist: true,
    systemCmake: ["3.31.2"],
  },
];

export interface Case {
  id: string;
  /** The pyproject.toml bytes given to both readers. */
  toml: Uint8Array;
  context: CaseContext;
}

type Table = Record<string, unknown>;
const isTable = (v: unknown): v is Table =>
  typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Date);
const clone = <T>(v: T): T => structuredClone(v);
const encode = (text: string) => new TextEncoder().encode(text);

export function corpus(): { name: string; text: string }[] {
  return readdirSync(CORPUS_DIR)
    .filter((f) => f.endsWith(".toml"))
    .sort()
    .map((name) => ({ name, text: readFileSync(path.join(CORPUS_DIR, name), "utf8") }));
}

/** A pyproject with the given [tool.scikit-build] table (and [build-system] when given). */
function pyproject(skb: Table, buildSystem?: Table): Uint8Array {
  return encode(
    stringify({ ...(buildSystem ? { "build-system": buildSystem } : {}), tool: { "scikit-build": skb } }),
  );
}

/** Swaps two letters of the first long key of each section: a typo a person makes. */
function typos(skb: Table): Table[] {
  const out: Table[] = [];
  for (const [key, value] of Object.entries(skb)) {
    if (!isTable(value) || key === "metadata") continue;
    const sub = Object.keys(value).find((k) => k.length > 3);
    if (!sub) continue;
    const typo = sub.slice(0, 1) + sub[2] + sub[1] + sub.slice(3);
    const copy = clone(skb);
    const section = copy[key] as Table;
    section[typo] = section[sub];
    delete section[sub];
    out.push(copy);
  }
  const top = clone(skb);
  top.loggin = { level: "INFO" };
  out.push(top);
  return out;
}

/** Replaces values by ones of a wrong type. */
function wrongTypes(skb: Table): Table[] {
  const out: Table[] = [];
  for (const [key, value] of Object.entries(skb)) {
    if (!isTable(value) || key === "metadata") continue;
    for (const [sub, v] of Object.entries(value)) {
      const wrong =
        typeof v === "boolean" ? 3 : typeof v === "string" ? ["x"] : Array.isArray(v) ? "a;b" : undefined;
      if (wrong === undefined) continue;
      const copy = clone(skb);
      (copy[key] as Table)[sub] = wrong;
      out.push(copy);
      break;
    }
  }
  return out;
}

/** One override per condition kind, each once matching and once not (for the driver's facts). */
function conditionOverrides(facts: OracleFacts, release: string): Table[] {
  const [major, minor] = facts.python_version.split(".");
  const conds: [string, unknown, unknown][] = [
    ["python-version", `>=${major}.${minor}`, `<${major}.${Number(minor) - 1}`],
    ["implementation-name", facts.implementation_name, "^pypy$"],
    ["implementation-version", `>=${major}`, `<${major}`],
    ["platform-system", `^${facts.platform_system}$`, "^win32$"],
    ["platform-machine", facts.platform_machine.slice(0, 3), "^arm64$"],
    ["platform-node", ".", "^no-such-host$"],
    ["state", "wheel|sdist|editable", "^metadata_wheel$"],
    ["from-sdist", true, false],
    ["failed", true, false],
    ["system-cmake", ">=3.20", ">=3.30"],
    ["cmake-wheel", true, false],
    ["abi-flags", `^${facts.abi_flags}$`, "t"],
    ["scikit-build-version", `>=${release}`, `<${release}`],
    ["env", { CI: "true" }, { FLAG: true }],
    ["env", { FOO: "^b" }, { EMPTY: false }],
    ["env", { NUM: false }, { FLAG: false }],
    ["env", { ODD: false }, { ODD: true }],
  ];
  const out: Table[] = [];
  for (const [key, yes, no] of conds) {
    for (const value of [yes, no]) {
      out.push({
        cmake: { define: { BASE: "1" }, args: ["-DA=1"] },
        overrides: [
          { if: { [key]: value }, "build-dir": `build/${key}`, cmake: { define: { [`HIT_${key}`]: true } } },
        ],
      });
    }
  }
  out.push({ overrides: [{ if: { any: { state: "^sdist$", "from-sdist": true } }, "build-dir": "any" }] });
  out.push({
    overrides: [
      { if: { any: { state: "^sdist$" }, "platform-system": facts.platform_system }, "build-dir": "mixed" },
    ],
  });
  out.push({ overrides: [{ if: { platform_system: facts.platform_system }, "build-dir": "underscore" }] });
  out.push({
    overrides: [
      { if: { "python-version": ">=3.0" }, "build-dir": "a" },
      { if: { failed: true }, fail: true },
    ],
  });
  out.push({ overrides: [{ if: { "platform-system": "^win32$" }, cmake: { verison: "3" } }] });
  out.push({ overrides: [{ if: { state: "(" }, "build-dir": "bad-regex" }] });
  out.push({ overrides: [{ if: { "python-version": "3.x" }, "build-dir": "bad-spec" }] });
  out.push({ overrides: [{ if: { "no-such-condition": "1" }, "build-dir": "x" }] });
  return out;
}

/** inherit none/append/prepend on lists and tables, and a list-vs-table clash. */
function inheritCases(): Table[] {
  const base = { cmake: { args: ["a", "b"], define: { a: "A", b: "B" } }, sdist: { include: ["x"] } };
  const out: Table[] = [];
  for (const mode of ["none", "append", "prepend"]) {
    out.push({
      ...clone(base),
      overrides: [
        {
          if: { "platform-node": "." },
          inherit: { cmake: { args: mode, define: mode }, sdist: { include: mode } },
          cmake: { args: ["c"], define: { b: "X", c: "C" } },
          sdist: { include: ["y"] },
        },
      ],
    });
  }
  out.push({
    wheel: { packages: ["src/pkg"] },
    overrides: [
      {
        if: { "platform-node": "." },
        inherit: { wheel: { packages: "append" } },
        wheel: { packages: { pkg: "src/pkg" } },
      },
    ],
  });
  out.push({
    overrides: [
      { if: { "platform-node": "." }, inherit: { cmake: { args: "sideways" } }, cmake: { args: ["c"] } },
    ],
  });
  return out;
}

/** minimum-version against deprecated, moved and newer keys, and build-system.requires. */
function minimumVersionCases(): { skb: Table; buildSystem?: Table }[] {
  const out: { skb: Table; buildSystem?: Table }[] = [];
  const bodies: Table[] = [
    { cmake: { verbose: true } },
    { cmake: { targets: ["t"] } },
    { cmake: { "minimum-version": "3.15" } },
    { ninja: { "minimum-version": "1.10" } },
    { build: { verbose: true } },
    { cmake: { version: ">=3.20" } },
    { sdist: { "inclusion-mode": "manual" } },
    { cmake: { verbose: true }, build: { verbose: true } },
    {},
  ];
  for (const min of [undefined, "0.5", "0.8", "0.10", "0.12", "1.0", "1.1", "9.0"]) {
    for (const body of bodies)
      out.push({ skb: { ...(min ? { "minimum-version": min } : {}), ...clone(body) } });
  }
  for (const requires of [
    ["scikit-build-core>=0.10", "scikit-build-core>0.8"],
    ["scikit-build-core===0.9"],
    ["scikit-build-core~=0.11.2"],
    ["scikit-build-core"],
    ["scikit-build-core>=1.0"],
  ]) {
    out.push({
      skb: { "minimum-version": "build-system.requires", cmake: { verbose: true } },
      buildSystem: { requires },
    });
  }
  return out;
}

/** Keys and conditions of the 1.x line, with and without a minimum-version that allows them. */
function modernCases(): Table[] {
  const bodies: Table[] = [
    { env: { CC: "clang", JOBS: { env: "MAX_JOBS", default: "2", force: true } } },
    { install: { targets: ["install-py"] } },
    { sdist: { "force-include": { "a.txt": "data/a.txt" } } },
    { wheel: { "force-include": { "b.txt": "data/b.txt" }, reproducible: true } },
    { editable: { "rebuild-dir": "tree" }, "build-dir": "build" },
    { cmake: { fresh: true } },
    { cmake: { "build-type": ["Release", "Debug"] } },
    { sdist: { "inclusion-mode": "explicit" } },
    { sdist: { "resolve-symlinks": "external" } },
    { sdist: { "resolve-symlinks": true } },
    { overrides: [{ if: { not: { state: "^sdist$" } }, "build-dir": "not-sdist" }] },
    {
      "config-setting": { "pkg.fast": { type: "bool", default: false } },
      overrides: [{ if: { "config-setting": { "pkg.fast": false } }, "build-dir": "slow" }],
    },
    { cmake: { define: { FRUIT: ["Apple", "Lemon;Lime"] } } },
    {
      cmake: {
        define: {
          A: { env: "FLAG", default: false },
          B: { env: "EMPTY", default: "d" },
          C: { env: "NUM", default: true },
          D: { env: "UNSET" },
        },
      },
    },
    { editable: { rebuild: true, mode: "inplace" }, "build-dir": "build" },
    { editable: { rebuild: true } },
    { overrides: [{ if: { state: "editable" }, editable: { rebuild: true } }] },
    { wheel: { tags: ["cp312-abi3-linux_x86_64"] } },
    { overrides: [{ if: { state: "." }, wheel: { tags: ["not-a-tag"] } }] },
  ];
  const out: Table[] = [];
  for (const min of [undefined, "0.12", "1.0", "1.1"]) {
    for (const body of bodies) out.push({ ...(min ? { "minimum-version": min } : {}), ...clone(body) });
  }
  return out;
}

/** Bytes the backend's TOML reader refuses or that are not the shape of a pyproject. */
function byteCases(): Uint8Array[] {
  return [
    encode('\ufeff[tool.scikit-build]\nbuild-dir = "b"\n'),
    Uint8Array.from([...encode('[tool.scikit-build]\nbuild-dir = "'), 0xff, 0xfe, ...encode('"\n')]),
    encode("tool = 1\n"),
    encode("[tool]\nscikit-build = 1\n"),
    encode("[tool.scikit-build\n"),
  ];
}

/** Every case, for the driver's facts of one release. */
export function buildCases(facts: OracleFacts, release: string): Case[] {
  const cases: Case[] = [];
  const docs = corpus();
  for (const doc of docs) {
    for (const context of CONTEXTS)
      cases.push({ id: `corpus/${doc.name}@${context.name}`, toml: encode(doc.text), context });
  }
  const add = (kind: string, skb: Table, contexts: readonly CaseContext[], buildSystem?: Table) => {
    const toml = pyproject(skb, buildSystem);
    for (const context of contexts)
      cases.push({ id: `${kind}/${cases.length}@${context.name}`, toml, context });
  };
  const some = (i: number) => [CONTEXTS[i % CONTEXTS.length]!];
  docs.forEach((doc, i) => {
    const data = parse(doc.text) as Table;
    const skb = ((data.tool as Table | undefined)?.["scikit-build"] ?? {}) as Table;
    const buildSystem = data["build-system"] as Table | undefined;
    for (const t of typos(skb)) add(`typo/${doc.name}`, t, some(i), buildSystem);
    for (const t of wrongTypes(skb)) add(`type/${doc.name}`, t, some(i + 1), buildSystem);
  });
  for (const skb of conditionOverrides(facts, release)) add("condition", skb, CONTEXTS);
  for (const skb of inheritCases()) add("inherit", skb, CONTEXTS.slice(0, 2));
  for (const { skb, buildSystem } of minimumVersionCases())
    add("minimum-version", skb, CONTEXTS.slice(0, 1), buildSystem);
  for (const [i, skb] of modernCases().entries())
    add(
      "modern",
      skb,
      [...some(i), CONTEXTS[2]!].filter((c, j, a) => a.indexOf(c) === j),
    );
  for (const [i, toml] of byteCases().entries())
    cases.push({ id: `bytes/${i}@wheel`, toml, context: CONTEXTS[0]! });
  return cases;
}
