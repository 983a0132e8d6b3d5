// Rules beyond types: overrides shape, override-only keys, minimum-version rules, did-you-mean,
// strict-config, condition syntax, and the cross-field rules.
import { expect } from "chai";
import { type Diagnostic, validate } from "../../skbuild-settings/index.js";

const codes = (ds: Diagnostic[]) => ds.map((d) => `${d.code} ${d.path}`);

describe("settings rules", () => {
  describe("overrides shape", () => {
    it("requires `if`", () => {
      const res = validate({ overrides: [{ cmake: { args: ["x"] } }] });
      expect(codes(res.errors)).to.include("required tool.scikit-build.overrides[0].if");
    });
    it("rejects an empty `if` and an override with nothing to change", () => {
      const res = validate({ overrides: [{ if: {} }, { if: { state: "wheel" } }] });
      expect(codes(res.errors)).to.include.members([
        "override-shape tool.scikit-build.overrides[0].if",
        "override-shape tool.scikit-build.overrides[1]",
      ]);
    });
    it("accepts {any: conditions}, also mixed with plain conditions (as the backend does)", () => {
      expect(
        validate({ overrides: [{ if: { any: { state: "wheel", failed: true } }, experimental: true }] })
          .valid,
      ).to.equal(true);
      const res = validate({
        overrides: [{ if: { any: { state: "wheel" }, failed: true }, experimental: true }],
      });
      expect(res.errors).to.deep.equal([]);
    });
    it("rejects `overrides` and unknown keys inside an override, with suggestions", () => {
      const res = validate({ overrides: [{ if: { state: "wheel" }, overrides: [], cmak: {} }] });
      expect(codes(res.errors)).to.include.members([
        "unknown-key tool.scikit-build.overrides[0].overrides",
        "unknown-key tool.scikit-build.overrides[0].cmak",
      ]);
      const cmak = res.errors.find((e) => e.path.endsWith("cmak"))!;
      expect(cmak.suggestions).to.deep.equal(["tool.scikit-build.overrides[0].cmake"]);
    });
    it("accepts every section and top-level key inside an override", () => {
      const override = {
        if: { state: "wheel" },
        cmake: { args: ["a"] },
        ninja: { version: ">=1.11" },
        logging: { level: "INFO" },
        sdist: { include: ["x"] },
        wheel: { tags: ["py3-none-any"] },
        backport: { "find-python": "3.20" },
        editable: { mode: "inplace" },
        build: { verbose: true },
        install: { strip: false },
        generate: [{ path: "v.py", template: "x" }],
        messages: { "after-success": "ok" },
        search: { "site-packages": false },
        metadata: { version: { provider: "scikit_build_core.metadata.setuptools_scm" } },
        "strict-config": true,
        experimental: true,
        "minimum-version": "0.12",
        "build-dir": "build",
        fail: false,
        inherit: { cmake: { args: "append" } },
      };
      const res = validate({ overrides: [override] });
      expect(res.errors).to.deep.equal([]);
    });
  });

  describe("inherit entries", () => {
    const allowed: [string, string][] = [
      ["cmake", "args"],
      ["cmake", "define"],
      ["cmake", "targets"],
      ["sdist", "include"],
      ["sdist", "exclude"],
      ["wheel", "packages"],
      ["wheel", "license-files"],
      ["wheel", "exclude"],
      ["wheel", "tags"],
      ["build", "tool-args"],
      ["build", "targets"],
      ["build", "requires"],
      ["install", "components"],
    ];
    for (const [sec, key] of allowed) {
      it(`allows inherit.${sec}.${key} with none, append and prepend`, () => {
        for (const mode of ["none", "append", "prepend"]) {
          const res = validate({
            overrides: [
              {
                if: { state: "wheel" },
                inherit: { [sec]: { [key]: mode } },
                [sec]: { [key]: key === "define" ? {} : [] },
              },
            ],
          });
          expect(res.errors, `${mode}: ${JSON.stringify(res.errors)}`).to.deep.equal([]);
        }
      });
    }
    it("rejects other entries, other modes and inherit for top-level lists", () => {
      const res = validate({
        overrides: [
          {
            if: { state: "wheel" },
            inherit: { cmake: { "build-type": "append" } },
            cmake: { "build-type": "Debug" },
          },
          { if: { state: "wheel" }, inherit: { cmake: { args: "merge" } }, cmake: { args: [] } },
          { if: { state: "wheel" }, inherit: { generate: "append" }, generate: [] },
        ],
      });
      expect(codes(res.errors)).to.include.members([
        "unknown-key tool.scikit-build.overrides[0].inherit.cmake.build-type",
        "enum tool.scikit-build.overrides[1].inherit.cmake.args",
        "unknown-key tool.scikit-build.overrides[2].inherit.generate",
      ]);
    });
    it("warns about an inherit entry for a key the override does not set", () => {
      const res = validate({
        overrides: [
          { if: { state: "wheel" }, inherit: { cmake: { define: "append" } }, cmake: { args: [] } },
        ],
      });
      expect(res.valid).to.equal(true);
      expect(codes(res.warnings)).to.deep.equal([
        "inherit-unused tool.scikit-build.overrides[0].inherit.cmake.define",
      ]);
    });
  });

  describe("override-only keys", () => {
    it("rejects cmake.toolchain-file, wheel.tags and fail outside overrides", () => {
      const res = validate({
        cmake: { "toolchain-file": "tc.cmake" },
        wheel: { tags: ["py3-none-any"] },
        fail: true,
      });
      expect(codes(res.errors)).to.deep.equal([
        "override-only tool.scikit-build.cmake.toolchain-file",
        "override-only tool.scikit-build.wheel.tags",
        "override-only tool.scikit-build.fail",
      ]);
      expect(res.errors[0]!.message).to.contain("overrides");
    });
    it("accepts them inside an override", () => {
      const res = validate({
        overrides: [
          {
            if: { "platform-system": "win32" },
            cmake: { "toolchain-file": "tc.cmake" },
            wheel: { tags: ["py3-none-any"] },
            fail: true,
          },
        ],
      });
      expect(res.errors).to.deep.equal([]);
    });
    it("are warnings when strict-config is false", () => {
      const res = validate({ "strict-config": false, fail: true });
      expect(res.valid).to.equal(true);
      expect(codes(res.warnings)).to.deep.equal(["override-only tool.scikit-build.fail"]);
    });
  });

  describe("unknown keys and did-you-mean", () => {
    it("suggests close keys at the same level, as full dotted paths", () => {
      const res = validate({ cmake: { verison: ">=3.15" }, logger: { level: "INFO" } });
      expect(res.errors).to.have.length(2);
      const byPath = Object.fromEntries(res.errors.map((e) => [e.path, e]));
      expect(byPath["tool.scikit-build.cmake.verison"]!.suggestions![0]).to.equal(
        "tool.scikit-build.cmake.version",
      );
      expect(byPath["tool.scikit-build.logger"]!.suggestions).to.deep.equal(["tool.scikit-build.logging"]);
    });
    it("suggests a key from another section when it exists there", () => {
      const res = validate({ requires: ["numpy"] });
      expect(res.errors[0]!.suggestions).to.deep.equal(["tool.scikit-build.build.requires"]);
    });
    it("suggests the hyphenated spelling of an underscored condition", () => {
      const res = validate({ overrides: [{ if: { platform_machine: "x86_64" }, experimental: true }] });
      expect(res.errors[0]).to.include({
        code: "unknown-key",
        path: "tool.scikit-build.overrides[0].if.platform_machine",
      });
      expect(res.errors[0]!.suggestions![0]).to.equal("tool.scikit-build.overrides[0].if.platform-machine");
    });
    it("accepts scikit-build-version and flags 1.x keys on the 0.12 line", () => {
      const res = validate({
        env: { A: "1" },
        sdist: { "force-include": {} },
        overrides: [{ if: { "scikit-build-version": ">=1" }, experimental: true }],
      });
      const byPath = Object.fromEntries(res.errors.map((e) => [e.path, e]));
      expect(byPath["tool.scikit-build.overrides[0].if.scikit-build-version"]).to.equal(undefined);
      expect(byPath["tool.scikit-build.env"]!.message).to.contain("scikit-build-core 1.x setting");
      expect(byPath["tool.scikit-build.sdist.force-include"]!.message).to.contain(
        "scikit-build-core 1.x setting",
      );
    });
    it("gives no suggestion when nothing is close", () => {
      const res = validate({ zzzzqqq: 1 });
      expect(res.errors[0]!.suggestions).to.equal(undefined);
    });
    it("makes unknown keys warnings when strict-config is false", () => {
      const res = validate({ "strict-config": false, cmake: { verison: "3" } });
      expect(res.valid).to.equal(true);
      expect(res.warnings[0]).to.include({ code: "unknown-key", severity: "warning" });
      expect(res.warnings[0]!.message).to.contain("strict-config is false");
    });
    it("keeps unknown conditions errors even when strict-config is false", () => {
      const res = validate({
        "strict-config": false,
        overrides: [{ if: { planet: "mars" }, experimental: true }],
      });
      expect(res.valid).to.equal(false);
    });
    it("keeps type errors errors when strict-config is false", () => {
      expect(validate({ "strict-config": false, experimental: "yes" }).valid).to.equal(false);
    });
  });

  describe("reporting", () => {
    it("lists diagnostics in document order, whatever rule found them", () => {
      const res = validate({
        wheel: { tags: ["py3-none-any"] },
        cmake: { verison: "3" },
        metadata: { version: {} },
        logger: {},
      });
      expect(res.errors.map((e) => e.path)).to.deep.equal([
        "tool.scikit-build.wheel.tags",
        "tool.scikit-build.cmake.verison",
        "tool.scikit-build.metadata.version.provider",
        "tool.scikit-build.logger",
      ]);
    });
    it("suggests == and >= for a bare version where a specifier set is expected", () => {
      const res = validate({ overrides: [{ if: { "python-version": "3.12" }, experimental: true }] });
      expect(res.errors[0]!.suggestions).to.deep.equal(['"==3.12"', '">=3.12"']);
    });
  });

  describe("condition syntax", () => {
    it("checks specifier sets of every specifier condition", () => {
      for (const key of ["backend-version", "python-version", "implementation-version", "system-cmake"]) {
        expect(
          validate({ overrides: [{ if: { [key]: ">=3.10,<3.13" }, experimental: true }] }).valid,
          key,
        ).to.equal(true);
        const res = validate({ overrides: [{ if: { [key]: "=>3.10" }, experimental: true }] });
        expect(res.errors[0], key).to.include({
          code: "specifier",
          path: `tool.scikit-build.overrides[0].if.${key}`,
        });
      }
    });
    it("checks regular expressions of every regex condition and env values", () => {
      const keys = [
        "implementation-name",
        "platform-system",
        "platform-machine",
        "platform-node",
        "state",
        "abi-flags",
      ];
      for (const key of keys) {
        expect(
          validate({ overrides: [{ if: { [key]: "^(a|b)$" }, experimental: true }] }).errors,
          key,
        ).to.deep.equal([]);
        const res = validate({ overrides: [{ if: { [key]: "(unclosed" }, experimental: true }] });
        expect(res.errors[0], key).to.include({
          code: "regex",
          path: `tool.scikit-build.overrides[0].if.${key}`,
        });
      }
      const env = validate({ overrides: [{ if: { env: { FOO: "[z-a]" } }, experimental: true }] });
      expect(env.errors[0]).to.include({ code: "regex", path: "tool.scikit-build.overrides[0].if.env.FOO" });
    });
    it("accepts Python-only regex spellings such as (?P<name>...) and (?i)", () => {
      const res = validate({
        overrides: [{ if: { "platform-system": "(?i)(?P<os>LINUX|darwin)" }, experimental: true }],
      });
      expect(res.errors).to.deep.equal([]);
    });
    it("checks the types of bool and env conditions", () => {
      const res = validate({
        overrides: [
          {
            if: { "from-sdist": "yes", failed: 1, "cmake-wheel": "true", env: { A: 1 } },
            experimental: true,
          },
        ],
      });
      expect(codes(res.errors)).to.include.members([
        "type tool.scikit-build.overrides[0].if.from-sdist",
        "type tool.scikit-build.overrides[0].if.failed",
        "type tool.scikit-build.overrides[0].if.cmake-wheel",
        "type tool.scikit-build.overrides[0].if.env.A",
      ]);
    });
    it("rejects an empty env table", () => {
      const res = validate({ overrides: [{ if: { env: {} }, experimental: true }] });
      expect(codes(res.errors)).to.include("override-shape tool.scikit-build.overrides[0].if.env");
    });
    it("warns when a state regex can match no build state", () => {
      const res = validate({ overrides: [{ if: { state: "^whl$" }, experimental: true }] });
      expect(codes(res.warnings)).to.deep.equal([
        "state-never-matches tool.scikit-build.overrides[0].if.state",
      ]);
    });
    it("checks cmake.version, ninja.version, minimum-version and backport.find-python syntax", () => {
      expect(validate({ cmake: { version: "CMakeLists.txt" }, "minimum-version": "0.10" }).valid).to.equal(
        true,
      );
      const res = validate({
        cmake: { version: "3.15+" },
        "minimum-version": "latest",
        backport: { "find-python": "three" },
      });
      expect(codes(res.errors)).to.include.members([
        "specifier tool.scikit-build.cmake.version",
        "version tool.scikit-build.minimum-version",
        "version tool.scikit-build.backport.find-python",
      ]);
    });
  });

  describe("deprecated keys and minimum-version", () => {
    const cases: [string, Record<string, unknown>, string, string][] = [
      ["cmake.minimum-version", { cmake: { "minimum-version": "3.21" } }, "cmake.version", "0.8"],
      ["ninja.minimum-version", { ninja: { "minimum-version": "1.10" } }, "ninja.version", "0.8"],
      ["cmake.verbose", { cmake: { verbose: true } }, "build.verbose", "0.10"],
      ["cmake.targets", { cmake: { targets: ["a"] } }, "build.targets", "0.10"],
    ];
    for (const [key, doc, replacement, since] of cases) {
      it(`${key}: warning when minimum-version is unset, naming ${replacement}`, () => {
        const res = validate(doc);
        expect(res.valid).to.equal(true);
        expect(res.warnings[0]).to.include({ code: "deprecated", path: `tool.scikit-build.${key}` });
        expect(res.warnings[0]!.message).to.contain(replacement).and.contain(since);
      });
      it(`${key}: error when minimum-version >= ${since}`, () => {
        const res = validate({ ...doc, "minimum-version": since });
        expect(res.errors[0]).to.include({ code: "deprecated", path: `tool.scikit-build.${key}` });
        expect(res.errors[0]!.message).to.contain(replacement);
      });
      it(`${key}: allowed without a diagnostic when minimum-version < ${since}`, () => {
        const res = validate({ ...doc, "minimum-version": "0.7" });
        expect(res.errors).to.deep.equal([]);
        expect(res.warnings).to.deep.equal([]);
      });
      it(`${key}: error when unset with backend version 1.0`, () => {
        const res = validate(doc, { backendVersion: "1.0.3" });
        expect(res.errors[0]).to.include({ code: "deprecated" });
      });
    }
    it("rejects old and new key together", () => {
      const res = validate({ cmake: { verbose: true }, build: { verbose: true } });
      expect(res.errors[0]!.message).to.contain("cannot set both cmake.verbose and build.verbose");
    });
    it("rejects a new key below the version that introduced it", () => {
      const res = validate({
        "minimum-version": "0.9",
        build: { targets: ["a"] },
        sdist: { "inclusion-mode": "manual" },
      });
      expect(codes(res.errors)).to.deep.equal([
        "introduced tool.scikit-build.build.targets",
        "introduced tool.scikit-build.sdist.inclusion-mode",
      ]);
    });
    it("applies the rules inside overrides too", () => {
      const res = validate({
        "minimum-version": "0.10",
        overrides: [{ if: { state: "wheel" }, cmake: { verbose: true } }],
      });
      expect(codes(res.errors)).to.deep.equal(["deprecated tool.scikit-build.overrides[0].cmake.verbose"]);
    });
    it('resolves minimum-version = "build-system.requires" from the lower bound', () => {
      const requires = ["pybind11", "scikit-build-core[pyproject] >=0.9.2,<2; python_version>'3'"];
      const res = validate(
        { "minimum-version": "build-system.requires", cmake: { verbose: true } },
        { buildSystemRequires: requires },
      );
      expect(res.minimumVersion).to.equal("0.9.2");
      expect(res.errors).to.deep.equal([]);
    });
    it('rejects "build-system.requires" without a lower bound', () => {
      const res = validate(
        { "minimum-version": "build-system.requires" },
        { buildSystemRequires: ["scikit-build-core"] },
      );
      expect(res.errors[0]).to.include({
        code: "minimum-version",
        path: "tool.scikit-build.minimum-version",
      });
    });
  });

  describe("cross-field rules", () => {
    it("requires a provider in metadata tables", () => {
      const res = validate({ metadata: { version: { input: "x" } } });
      expect(codes(res.errors)).to.deep.equal([
        "metadata-provider tool.scikit-build.metadata.version.provider",
      ]);
    });
    it("needs experimental for providers outside scikit-build-core", () => {
      const doc = { metadata: { version: { provider: "my_provider", "provider-path": "tools" } } };
      expect(validate(doc).errors[0]!.message).to.contain("experimental = true");
      expect(validate({ ...doc, experimental: true }).valid).to.equal(true);
    });
    it("requires build-dir for editable.rebuild", () => {
      expect(codes(validate({ editable: { rebuild: true } }).errors)).to.deep.equal([
        "editable-rebuild tool.scikit-build.editable.rebuild",
      ]);
      expect(validate({ editable: { rebuild: true }, "build-dir": "build" }).valid).to.equal(true);
    });
    it("requires wheel.packages table entries to match in the last path component", () => {
      const res = validate({ wheel: { packages: { "mypkg/sub": "src/mypkg/sub", other: "src/different" } } });
      expect(codes(res.errors)).to.deep.equal(["wheel-packages tool.scikit-build.wheel.packages.other"]);
    });
  });
});
