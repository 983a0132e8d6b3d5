// Every specified key (docs/spec-rules.md#build-settings-schema) accepted with a valid value and
// rejected with an invalid one.
import { expect } from "chai";
import { validate } from "../../skbuild-settings/index.js";

/** [dotted key, a valid value, an invalid value, expected diagnostic code for the invalid one] */
const KEYS: [string, unknown, unknown, string][] = [
  ["cmake.version", ">=3.15", ">=3.x", "specifier"],
  ["cmake.args", ["-DFOO=1"], "-DFOO=1", "type"],
  ["cmake.define", { A: "1" }, ["A=1"], "type"],
  ["cmake.build-type", "Debug", 1, "type"],
  ["cmake.source-dir", "src", true, "type"],
  ["cmake.python-hints", false, "no", "type"],
  ["ninja.version", ">=1.10", "1.10 or later", "specifier"],
  ["ninja.make-fallback", false, "false", "type"],
  ["logging.level", "DEBUG", "debug", "enum"],
  ["sdist.include", ["a/**"], [1], "type"],
  ["sdist.exclude", ["b/"], "b/", "type"],
  ["sdist.inclusion-mode", "manual", "explicit", "enum"],
  ["sdist.reproducible", false, 0, "type"],
  ["sdist.cmake", true, "yes", "type"],
  ["sdist.resolve-symlinks", false, "all", "type"],
  ["wheel.packages", ["src/pkg"], "src/pkg", "type"],
  ["wheel.py-api", "cp312", 312, "type"],
  ["wheel.expand-macos-universal-tags", true, 1, "type"],
  ["wheel.install-dir", "pkg", ["pkg"], "type"],
  ["wheel.license-files", ["LICENSE*"], "LICENSE", "type"],
  ["wheel.cmake", false, null, "type"],
  ["wheel.platlib", true, "platlib", "type"],
  ["wheel.exclude", ["*.pyx"], { a: 1 }, "type"],
  ["wheel.build-tag", "1", 1, "type"],
  ["backport.find-python", "3.20", 3.2, "type"],
  ["editable.mode", "inplace", "copy", "enum"],
  ["editable.verbose", false, "quiet", "type"],
  ["editable.rebuild", false, "sometimes", "type"],
  ["build.tool-args", ["-j4"], "-j4", "type"],
  ["build.targets", ["mod"], "mod", "type"],
  ["build.verbose", true, "true", "type"],
  ["build.requires", ["numpy"], "numpy", "type"],
  ["install.components", ["python"], "python", "type"],
  ["install.strip", false, "off", "type"],
  ["messages.after-failure", "Build failed", ["x"], "type"],
  ["messages.after-success", "Done", false, "type"],
  ["search.site-packages", false, "no", "type"],
  ["metadata.version", { provider: "scikit_build_core.metadata.regex" }, { provider: 2 }, "type"],
  ["strict-config", false, "false", "type"],
  ["experimental", true, 1, "type"],
  ["minimum-version", "0.10", 0.1, "type"],
  ["build-dir", "build/{wheel_tag}", 1, "type"],
  ["generate", [{ path: "a.py", template: "x" }], { path: "a.py" }, "type"],
  ["overrides", [{ if: { state: "wheel" }, experimental: true }], { if: {} }, "type"],
];

function nest(dotted: string, value: unknown): Record<string, unknown> {
  const [head, ...rest] = dotted.split(".");
  return { [head!]: rest.length ? nest(rest.join("."), value) : value };
}

describe("settings schema: every key", () => {
  for (const [key, good, bad, code] of KEYS) {
    it(`${key} accepts ${JSON.stringify(good)} and rejects ${JSON.stringify(bad)}`, () => {
      const ok = validate(nest(key, good));
      expect(ok.errors, JSON.stringify(ok.errors)).to.deep.equal([]);
      const res = validate(nest(key, bad));
      expect(res.valid).to.equal(false);
      const hit = res.errors.find((e) => e.path.startsWith(`tool.scikit-build.${key}`));
      expect(hit, JSON.stringify(res.errors)).to.not.equal(undefined);
      expect(hit!.code).to.equal(code);
    });
  }

  it("names the expected type and the value given", () => {
    const res = validate({ cmake: { "build-type": 3 } });
    expect(res.errors).to.deep.equal([
      {
        severity: "error",
        code: "type",
        path: "tool.scikit-build.cmake.build-type",
        message: "expected a string, got a number (3)",
      },
    ]);
  });

  it("lists allowed enum values and suggests the closest", () => {
    const [err] = validate({ logging: { level: "WARN" } }).errors;
    expect(err!.message).to.contain('"WARNING"');
    expect(err!.suggestions).to.deep.equal(['"WARNING"']);
  });

  it("accepts an empty document and rejects a non-table", () => {
    expect(validate({}).valid).to.equal(true);
    const res = validate(["cmake"]);
    expect(res.errors[0]!.code).to.equal("not-a-table");
  });

  describe("cmake.define value forms", () => {
    const ok = [
      "ON",
      true,
      ["a", "b"],
      { env: "FOO" },
      { env: "FOO", default: "x" },
      { env: "FOO", default: false },
      { env: "FOO", default: ["a"] },
    ];
    for (const v of ok)
      it(`accepts ${JSON.stringify(v)}`, () =>
        expect(validate({ cmake: { define: { X: v } } }).errors).to.deep.equal([]));
    const bad: [unknown, string, string][] = [
      [3, "type", "tool.scikit-build.cmake.define.X"],
      [[1], "type", "tool.scikit-build.cmake.define.X[0]"],
      [{ env: "" }, "empty", "tool.scikit-build.cmake.define.X.env"],
      [{ default: false }, "required", "tool.scikit-build.cmake.define.X.env"],
      [{ env: "A", other: 1 }, "unknown-key", "tool.scikit-build.cmake.define.X.other"],
      [{ env: "A", default: 1 }, "type", "tool.scikit-build.cmake.define.X.default"],
    ];
    for (const [v, code, path] of bad) {
      it(`rejects ${JSON.stringify(v)} (${code})`, () => {
        const errs = validate({ cmake: { define: { X: v } } }).errors;
        expect(errs.map((e) => [e.code, e.path])).to.deep.include([code, path]);
      });
    }
    it("rejects an empty define name", () => {
      const errs = validate({ cmake: { define: { "": "x" } } }).errors;
      expect(errs[0]).to.include({ code: "empty", path: 'tool.scikit-build.cmake.define.""' });
    });
  });

  describe("generate items", () => {
    it("accepts path + template and path + template-path with a location", () => {
      const res = validate({
        generate: [
          { path: "a.py", template: "v = '$version'" },
          { path: "b.py", "template-path": "b.py.in", location: "build" },
        ],
      });
      expect(res.errors).to.deep.equal([]);
    });
    it("rejects a path alone, both templates, empty strings and a bad location", () => {
      const res = validate({
        generate: [
          { path: "a.py" },
          { path: "b.py", template: "x", "template-path": "y" },
          { path: "", template: "" },
          { path: "c.py", template: "x", location: "platlib" },
        ],
      });
      const got = res.errors.map((e) => `${e.code} ${e.path}`);
      expect(got).to.include.members([
        "generate-template tool.scikit-build.generate[0]",
        "generate-template tool.scikit-build.generate[1]",
        "empty tool.scikit-build.generate[2].path",
        "empty tool.scikit-build.generate[2].template",
        "enum tool.scikit-build.generate[3].location",
      ]);
      expect(res.errors.find((e) => e.path.endsWith("generate[1]"))!.message).to.contain("not both");
    });
  });

  describe("metadata", () => {
    it("accepts every spec field and provider-specific keys", () => {
      const fields = ["version", "description", "license", "readme", "requires-python", "dependencies"];
      const more = ["optional-dependencies", "entrypoints", "authors", "maintainers", "urls", "classifiers"];
      const all = [...fields, ...more, "keywords", "scripts", "gui-scripts"];
      const metadata = Object.fromEntries(
        all.map((f) => [f, { provider: "scikit_build_core.metadata.regex", input: "x" }]),
      );
      expect(validate({ metadata }).errors).to.deep.equal([]);
    });
    it("rejects an unknown field and a non-string provider-path", () => {
      const res = validate({
        metadata: {
          nonsense: { provider: "x" },
          version: { provider: "scikit_build_core.x", "provider-path": true },
        },
      });
      expect(res.errors.map((e) => e.path)).to.include.members([
        "tool.scikit-build.metadata.nonsense",
        "tool.scikit-build.metadata.version.provider-path",
      ]);
    });
  });

  describe("wheel.packages and wheel.tags", () => {
    it("accepts a table of wheel path to source path", () => {
      expect(validate({ wheel: { packages: { pkg: "src/pkg" } } }).errors).to.deep.equal([]);
    });
    it("rejects non-string table values", () => {
      const res = validate({ wheel: { packages: { pkg: 1 } } });
      expect(res.errors[0]).to.include({ code: "type", path: "tool.scikit-build.wheel.packages.pkg" });
    });
    it("checks the <interpreter>-<abi>-<platform> form of wheel.tags (inside an override)", () => {
      const good = validate({
        overrides: [{ if: { state: "wheel" }, wheel: { tags: ["cp312-abi3-linux_x86_64"] } }],
      });
      expect(good.errors).to.deep.equal([]);
      const bad = validate({ overrides: [{ if: { state: "wheel" }, wheel: { tags: ["py3-none"] } }] });
      expect(bad.errors[0]).to.include({
        code: "pattern",
        path: "tool.scikit-build.overrides[0].wheel.tags[0]",
      });
    });
  });
});
