// Override evaluation: every condition kind, any, inherit, fail/retry, defaults and define resolution.
import { expect } from "chai";
import { type BuildContext, evaluate, isTruthy } from "../../skbuild-settings/index.js";

/** Whether a single-override document with this `if` applies in the context. */
function applies(cond: Record<string, unknown>, ctx: BuildContext): boolean {
  const res = evaluate({ overrides: [{ if: cond, experimental: true }] }, ctx);
  expect(res.errors, JSON.stringify(res.errors)).to.deep.equal([]);
  return res.matched.length === 1 && res.effective!.experimental === true;
}

describe("settings evaluate", () => {
  describe("condition kinds", () => {
    const cases: [string, Record<string, unknown>, BuildContext, BuildContext][] = [
      [
        "backend-version",
        { "backend-version": ">=0.10" },
        { backendVersion: "0.12" },
        { backendVersion: "0.9" },
      ],
      ["python-version", { "python-version": ">=3.10" }, { pythonVersion: "3.12" }, { pythonVersion: "3.9" }],
      [
        "implementation-name",
        { "implementation-name": "pypy" },
        { implementationName: "pypy" },
        { implementationName: "cpython" },
      ],
      [
        "implementation-version",
        { "implementation-version": ">=3.13" },
        { implementationVersion: "3.13.1" },
        { implementationVersion: "3.12.7" },
      ],
      [
        "platform-system",
        { "platform-system": "^darwin$" },
        { platformSystem: "darwin" },
        { platformSystem: "linux" },
      ],
      [
        "platform-machine",
        { "platform-machine": "x86_" },
        { platformMachine: "x86_64" },
        { platformMachine: "arm64" },
      ],
      [
        "platform-node",
        { "platform-node": "^ci-" },
        { platformNode: "ci-runner-3" },
        { platformNode: "laptop" },
      ],
      ["state", { state: "metadata_" }, { state: "metadata_wheel" }, { state: "sdist" }],
      ["from-sdist", { "from-sdist": true }, { fromSdist: true }, { fromSdist: false }],
      ["failed", { failed: true }, { failed: true }, {}],
      [
        "system-cmake",
        { "system-cmake": ">=3.24" },
        { systemCmake: ["3.20", "3.28.1"] },
        { systemCmake: "3.22" },
      ],
      ["cmake-wheel", { "cmake-wheel": false }, { cmakeWheel: false }, { cmakeWheel: true }],
      ["abi-flags", { "abi-flags": "t" }, { abiFlags: "t" }, { abiFlags: "" }],
      ["env (regex)", { env: { CC: "clang" } }, { env: { CC: "/usr/bin/clang-18" } }, { env: { CC: "gcc" } }],
      ["env (bool true)", { env: { CI: true } }, { env: { CI: "TRUE" } }, { env: { CI: "0" } }],
      ["env (bool false)", { env: { CI: false } }, { env: {} }, { env: { CI: "yes" } }],
    ];
    for (const [name, cond, yes, no] of cases) {
      it(`${name}: matches ${JSON.stringify(yes)} and not ${JSON.stringify(no)}`, () => {
        expect(applies(cond, yes)).to.equal(true);
        expect(applies(cond, no)).to.equal(false);
      });
    }

    it("regexes are searched unanchored, in Python syntax", () => {
      expect(applies({ "platform-system": "arwi" }, { platformSystem: "darwin" })).to.equal(true);
      expect(applies({ "platform-system": "(?i)WIN" }, { platformSystem: "win32" })).to.equal(true);
    });
    it("python-version compares the two-part version with PEP 440 rules", () => {
      expect(applies({ "python-version": ">=3.10,<3.13" }, { pythonVersion: "3.13" })).to.equal(false);
      expect(applies({ "python-version": "~=3.11" }, { pythonVersion: "3.12" })).to.equal(true);
      expect(applies({ "python-version": "==3.*" }, { pythonVersion: "3.8" })).to.equal(true);
    });
    it("pre-release interpreters satisfy plain lower bounds", () => {
      expect(applies({ "implementation-version": ">=3.13" }, { implementationVersion: "3.14.0b1" })).to.equal(
        true,
      );
    });
    it("env regex needs the variable to be set; an unset bool variable is false", () => {
      expect(applies({ env: { FOO: ".*" } }, { env: {} })).to.equal(false);
      expect(applies({ env: { FOO: ".*" } }, { env: { FOO: "" } })).to.equal(true);
      expect(applies({ env: { FOO: false } }, { env: { FOO: "" } })).to.equal(true);
    });
    it("no system CMake means system-cmake never matches", () => {
      expect(applies({ "system-cmake": ">=3" }, { systemCmake: [] })).to.equal(false);
    });
    it("all plain conditions must match", () => {
      const cond = { "platform-system": "darwin", "platform-machine": "arm64" };
      expect(applies(cond, { platformSystem: "darwin", platformMachine: "arm64" })).to.equal(true);
      expect(applies(cond, { platformSystem: "darwin", platformMachine: "x86_64" })).to.equal(false);
    });
    it("`any` needs one matching condition", () => {
      const cond = { any: { "platform-system": "win32", env: { FORCE: true } } };
      expect(applies(cond, { platformSystem: "linux", env: { FORCE: "1" } })).to.equal(true);
      expect(applies(cond, { platformSystem: "win32" })).to.equal(true);
      expect(applies(cond, { platformSystem: "linux", env: {} })).to.equal(false);
    });
    it("does not warn about unknown facts when a known condition already decides", () => {
      const doc = {
        overrides: [{ if: { "python-version": ">=3.13", "abi-flags": "t" }, experimental: true }],
      };
      expect(evaluate(doc, { pythonVersion: "3.12" }).warnings).to.deep.equal([]);
      expect(evaluate(doc, { pythonVersion: "3.13" }).warnings[0]!.message).to.contain("abi-flags");
      const any = {
        overrides: [{ if: { any: { "python-version": ">=3.13", "abi-flags": "t" } }, experimental: true }],
      };
      expect(evaluate(any, { pythonVersion: "3.13" }).warnings).to.deep.equal([]);
      expect(evaluate(any, { pythonVersion: "3.12" }).warnings[0]!.message).to.contain("abi-flags");
    });
    it("warns when an override cannot match because the context lacks a fact", () => {
      const res = evaluate({ overrides: [{ if: { "python-version": ">=3.10" }, experimental: true }] }, {});
      expect(res.matched).to.deep.equal([]);
      expect(res.warnings[0]).to.include({ code: "context", path: "tool.scikit-build.overrides[0]" });
      expect(res.warnings[0]!.message).to.equal(
        "not applied: the build context does not say python-version (give --python)",
      );
    });
  });

  describe("truthy environment values (spec)", () => {
    it("true, on, yes, y, t in any case and numbers above 0 are truthy", () => {
      for (const v of ["true", "TRUE", "On", "yes", "Y", "t", "1", "3", "0.5"])
        expect(isTruthy(v), v).to.equal(true);
    });
    it("everything else is falsy", () => {
      for (const v of [undefined, "", "0", "-1", "false", "off", "no", "random", "0.0"])
        expect(isTruthy(v), String(v)).to.equal(false);
    });
  });

  describe("applying overrides", () => {
    const base = { cmake: { args: ["a", "b"], define: { a: "A", b: "B" }, "build-type": "Release" } };
    const override = (mode?: string) => ({
      if: { state: "wheel" },
      ...(mode ? { inherit: { cmake: { args: mode, define: mode } } } : {}),
      cmake: { args: ["c", "d"], define: { b: "X", c: "C" } },
    });
    const run = (mode?: string) =>
      evaluate({ ...base, overrides: [override(mode)] }, { state: "wheel" }).effective!.cmake;

    it("inherit none (default) replaces lists and tables", () => {
      for (const mode of [undefined, "none"]) {
        const cmake = run(mode);
        expect(cmake.args).to.deep.equal(["c", "d"]);
        expect(cmake.define).to.deep.equal({ b: "X", c: "C" });
      }
    });
    it("inherit append adds after; the override wins in tables", () => {
      const cmake = run("append");
      expect(cmake.args).to.deep.equal(["a", "b", "c", "d"]);
      expect(cmake.define).to.deep.equal({ a: "A", b: "X", c: "C" });
    });
    it("inherit prepend adds before; the earlier value wins in tables", () => {
      const cmake = run("prepend");
      expect(cmake.args).to.deep.equal(["c", "d", "a", "b"]);
      expect(cmake.define).to.deep.equal({ a: "A", b: "B", c: "C" });
    });
    it("keys of a section the override does not name are kept", () => {
      expect(run()["build-type"]).to.equal("Release");
    });
    it("applies matching overrides in order, later ones seeing earlier results", () => {
      const res = evaluate(
        {
          cmake: { args: ["base"] },
          overrides: [
            { if: { "platform-machine": "x86_.*" }, cmake: { args: ["x86"] } },
            {
              if: { "platform-machine": "x86_32" },
              inherit: { cmake: { args: "append" } },
              cmake: { args: ["32"] },
            },
            { if: { "platform-machine": "arm" }, cmake: { args: ["arm"] } },
          ],
        },
        { platformMachine: "x86_32" },
      );
      expect(res.matched).to.deep.equal([0, 1]);
      expect(res.effective!.cmake.args).to.deep.equal(["x86", "32"]);
    });
    it("replaces top-level scalars and lists such as build-dir and generate", () => {
      const res = evaluate(
        {
          "build-dir": "a",
          generate: [{ path: "a.py", template: "a" }],
          overrides: [
            { if: { state: "sdist" }, "build-dir": "b", generate: [{ path: "b.py", template: "b" }] },
          ],
        },
        { state: "sdist" },
      );
      expect(res.effective!["build-dir"]).to.equal("b");
      expect(res.effective!.generate).to.deep.equal([{ location: "install", path: "b.py", template: "b" }]);
    });
  });

  describe("fail and retry", () => {
    const doc = {
      overrides: [
        { if: { "platform-system": "win32" }, fail: true },
        { if: { failed: true, "platform-system": "linux" }, build: { "tool-args": ["-j1"] } },
      ],
    };
    it("reports a matching fail = true override", () => {
      const res = evaluate(doc, { platformSystem: "win32" });
      expect(res.fail).to.equal(true);
      expect(res.failOverrides).to.deep.equal([0]);
      expect(evaluate(doc, { platformSystem: "darwin" }).fail).to.equal(false);
    });
    it("reports that a failed build would be retried when an override tests failed = true", () => {
      const linux = evaluate(doc, { platformSystem: "linux" });
      expect(linux.retryOnFailure).to.equal(true);
      expect(linux.effective!.build!["tool-args"]).to.deep.equal([]);
      const retry = evaluate(doc, { platformSystem: "linux", failed: true });
      expect(retry.effective!.build!["tool-args"]).to.deep.equal(["-j1"]);
      expect(evaluate(doc, { platformSystem: "darwin" }).retryOnFailure).to.equal(false);
    });
  });

  describe("effective settings", () => {
    it("fills the spec's defaults", () => {
      const eff = evaluate({}, {}).effective!;
      expect(eff.cmake).to.deep.equal({
        args: [],
        define: {},
        "build-type": "Release",
        "source-dir": ".",
        "python-hints": true,
      });
      expect(eff.ninja).to.deep.equal({ version: ">=1.5", "make-fallback": true });
      expect(eff.logging).to.deep.equal({ level: "WARNING" });
      expect(eff.sdist).to.deep.include({
        reproducible: true,
        cmake: false,
        "resolve-symlinks": true,
        "inclusion-mode": "default",
      });
      expect(eff.wheel).to.deep.include({
        "py-api": "",
        "expand-macos-universal-tags": false,
        "install-dir": "",
        cmake: true,
        "build-tag": "",
      });
      expect(eff.backport).to.deep.equal({ "find-python": "3.26.1" });
      expect(eff.editable).to.deep.equal({ mode: "redirect", verbose: true, rebuild: false });
      expect(eff.build).to.deep.include({ verbose: false });
      expect(eff.messages).to.deep.equal({ "after-failure": "", "after-success": "" });
      expect(eff.search).to.deep.equal({ "site-packages": true });
      expect(eff).to.deep.include({ "strict-config": true, experimental: false, "build-dir": "" });
    });
    it("uses classic inclusion-mode below minimum-version 0.12", () => {
      expect(evaluate({ "minimum-version": "0.11" }, {}).effective!.sdist!["inclusion-mode"]).to.equal(
        "classic",
      );
    });
    it("moves allowed deprecated keys onto their replacements", () => {
      const eff = evaluate(
        { "minimum-version": "0.5", cmake: { "minimum-version": "3.21", verbose: true, targets: ["t"] } },
        {},
      ).effective!;
      expect(eff.cmake.version).to.equal(">=3.21");
      expect(eff.build).to.deep.include({ verbose: true, targets: ["t"] });
      expect(eff.cmake).to.not.have.property("verbose");
    });
    it("resolves cmake.define values to strings, reading the environment", () => {
      const res = evaluate(
        {
          cmake: {
            define: {
              a: "x",
              b: true,
              c: false,
              d: ["1", "2"],
              e: { env: "SIMPLE" },
              f: { env: "UNSET", default: "fallback" },
              g: { env: "BOOL", default: false },
              h: { env: "UNSET" },
            },
          },
        },
        { env: { SIMPLE: "value", BOOL: "on" } },
      );
      expect(res.effective!.cmake.define).to.deep.equal({
        a: "x",
        b: "TRUE",
        c: "FALSE",
        d: "1;2",
        e: "value",
        f: "fallback",
        g: "TRUE",
      });
    });
    it("does not evaluate an invalid document", () => {
      const res = evaluate({ cmake: { verison: "3" } }, {});
      expect(res.valid).to.equal(false);
      expect(res.effective).to.equal(undefined);
    });
  });
});

describe("settings evaluate on parsed documents", () => {
  it("evaluates a parsed pyproject.toml without changing it", async () => {
    const { parseDocument, evaluateDocument } = await import("../../skbuild-settings/index.js");
    const doc = parseDocument(
      [
        "[build-system]",
        'requires = ["scikit-build-core>=0.11"]',
        "[tool.scikit-build]",
        'minimum-version = "build-system.requires"',
        'cmake.args = ["-DA=1"]',
        "[[tool.scikit-build.overrides]]",
        'if.state = "sdist"',
        'cmake.args = ["-DB=1"]',
      ].join("\n"),
      "pyproject.toml",
    );
    const before = JSON.stringify(doc.settings);
    const res = evaluateDocument(doc, { state: "sdist" });
    expect(res.minimumVersion).to.equal("0.11");
    expect(res.effective!.cmake.args).to.deep.equal(["-DB=1"]);
    expect(res.effective!["minimum-version"]).to.equal("0.11");
    expect(res.effective!.sdist!["inclusion-mode"]).to.equal("classic");
    expect(JSON.stringify(doc.settings)).to.equal(before);
    const again = evaluateDocument(doc, { state: "wheel" });
    expect(again.effective!.cmake.args).to.deep.equal(["-DA=1"]);
  });
});

describe("settings documents", () => {
  it("reads pyproject-shaped JSON and plain settings JSON alike", async () => {
    const { parseDocument } = await import("../../skbuild-settings/index.js");
    const shaped = parseDocument(
      JSON.stringify({
        "build-system": { requires: ["scikit-build-core>=0.10"] },
        tool: { "scikit-build": { experimental: true } },
      }),
      "p.json",
    );
    expect(shaped).to.deep.include({
      pyproject: true,
      settings: { experimental: true },
      buildSystemRequires: ["scikit-build-core>=0.10"],
    });
    const plain = parseDocument('{"experimental": true}', "s.json");
    expect(plain).to.deep.include({ pyproject: false, settings: { experimental: true } });
  });
  it("throws DocumentParseError with line and column for malformed TOML", async () => {
    const { parseDocument, DocumentParseError } = await import("../../skbuild-settings/index.js");
    try {
      parseDocument('[tool.scikit-build]\ncmake.args = ["a",\nx = 1\n', "bad.toml");
      expect.fail("no error");
    } catch (err) {
      expect(err).to.be.instanceOf(DocumentParseError);
      const e = err as InstanceType<typeof DocumentParseError>;
      expect(e.line).to.be.a("number");
      expect(e.message).to.match(/^bad\.toml: malformed TOML at line \d+, column \d+: /);
    }
  });
});
