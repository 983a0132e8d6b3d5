// Cases where the validator once disagreed with scikit-build-core, one each, and the 1.x line.
import { expect } from "chai";
import {
  type Diagnostic,
  DocumentParseError,
  decodeDocument,
  evaluate,
  evaluateDocument,
  parseDocument,
  validate,
} from "../../skbuild-settings/index.js";

const codes = (ds: Diagnostic[]) => ds.map((d) => `${d.code} ${d.path}`);
const NO_HOST = { state: "wheel" as const, env: {} };

describe("settings: agreement with scikit-build-core", () => {
  it("escapes ; inside cmake.define list items", () => {
    const ev = evaluate({ cmake: { define: { FRUIT: ["Apple", "Lemon;Lime"] } } }, NO_HOST);
    expect(ev.effective!.cmake.define.FRUIT).to.equal("Apple;Lemon\\;Lime");
  });
  it("refuses editable.rebuild with mode inplace on 0.12, accepts it on 1.x", () => {
    const doc = { "build-dir": "build", editable: { rebuild: true, mode: "inplace" } };
    expect(codes(validate(doc, { backendVersion: "0.12.2" }).errors)).to.deep.equal([
      "editable-rebuild tool.scikit-build.editable.rebuild",
    ]);
    expect(validate(doc, { backendVersion: "1.1.2" }).valid).to.equal(true);
    const dir = { editable: { "rebuild-dir": "tree", mode: "inplace" } };
    expect(codes(validate(dir, { backendVersion: "1.1.2" }).errors)).to.deep.equal([
      "editable-rebuild tool.scikit-build.editable.rebuild-dir",
    ]);
  });
  it("evaluate refuses a matching override that sets editable.rebuild without build-dir", () => {
    const doc = { overrides: [{ if: { state: "editable" }, editable: { rebuild: true } }] };
    expect(validate(doc).valid).to.equal(true); // the context decides
    const ev = evaluate(doc, { state: "editable", env: {} });
    expect(ev.valid).to.equal(false);
    expect(codes(ev.errors)).to.deep.equal(["editable-rebuild tool.scikit-build.editable.rebuild"]);
    expect(evaluate(doc, { state: "wheel", env: {} }).valid).to.equal(true);
  });
  it('minimum-version = "build-system.requires" takes the smallest lower bound and ignores ===', () => {
    const reqs = ["scikit-build-core>=0.10", "scikit-build-core>0.8,<2", "scikit-build-core===0.5"];
    const res = validate({ "minimum-version": "build-system.requires" }, { buildSystemRequires: reqs });
    expect(res.minimumVersion).to.equal("0.8");
    const only = validate(
      { "minimum-version": "build-system.requires" },
      { buildSystemRequires: ["scikit-build-core===0.9"] },
    );
    expect(codes(only.errors)).to.deep.equal(["minimum-version tool.scikit-build.minimum-version"]);
  });
  it("{env, default = <bool>} reads the variable as the backend does, an empty one included", () => {
    const define = {
      A: { env: "A", default: false },
      B: { env: "B", default: false },
      C: { env: "C", default: true },
      D: { env: "D", default: "fallback" },
    };
    const ev = evaluate({ cmake: { define } }, { env: { A: "random", B: "off", C: "", D: "" } });
    expect(ev.effective!.cmake.define).to.deep.equal({ A: "TRUE", B: "FALSE", C: "FALSE", D: "" });
  });
  it("refuses bytes that are not TOML: invalid UTF-8, a byte order mark, tool = 1", () => {
    const bad = Uint8Array.from([
      0x5b, 0x74, 0x6f, 0x6f, 0x6c, 0x5d, 0x0a, 0x61, 0x20, 0x3d, 0x20, 0x22, 0xff, 0x22,
    ]);
    expect(() => decodeDocument(bad, "p.toml")).to.throw(DocumentParseError, /not valid UTF-8/);
    const bom = new TextEncoder().encode("\ufeff[tool.scikit-build]\n");
    expect(() => decodeDocument(bom, "p.toml")).to.throw(DocumentParseError, /byte order mark/);
    expect(() => parseDocument("tool = 1\n", "p.toml")).to.throw(
      DocumentParseError,
      /`tool` must be a table/,
    );
  });
  it("fails an inherit append between a list and a table instead of replacing", () => {
    const doc = {
      wheel: { packages: ["src/a"] },
      overrides: [
        {
          if: { state: "wheel" },
          inherit: { wheel: { packages: "append" } },
          wheel: { packages: { a: "src/a" } },
        },
      ],
    };
    const ev = evaluate(doc, NO_HOST);
    expect(ev.valid).to.equal(false);
    expect(codes(ev.errors)).to.deep.equal(["inherit tool.scikit-build.overrides[0].inherit.wheel.packages"]);
    expect(ev.errors[0]!.message).to.contain("a list and a table");
  });
  it("matches scikit-build-version, with backend-version as its alias, against the backend version", () => {
    const doc = {
      overrides: [
        { if: { "scikit-build-version": ">=1.0" }, "build-dir": "new" },
        { if: { "backend-version": "<1.0" }, "build-dir": "old" },
      ],
    };
    expect(evaluate(doc, { ...NO_HOST, backendVersion: "1.1.2" }).effective!["build-dir"]).to.equal("new");
    expect(evaluate(doc, { ...NO_HOST, backendVersion: "0.12.2" }).effective!["build-dir"]).to.equal("old");
  });
  describe("the 1.x line", () => {
    const modern = {
      "minimum-version": "1.1",
      env: { CC: "clang", JOBS: { env: "MAX_JOBS", default: "2", force: true } },
      "config-setting": { "mypkg.fast": { type: "bool", default: false } },
      cmake: { "build-type": ["Release", "Debug"], fresh: true },
      install: { targets: ["install-python"] },
      sdist: {
        "force-include": { "a.txt": "data/a.txt" },
        "inclusion-mode": "explicit",
        "resolve-symlinks": "external",
      },
      wheel: { "force-include": { "b.txt": "data/b.txt" }, reproducible: true },
      editable: { "rebuild-dir": "tree" },
      "build-dir": "build",
      overrides: [
        {
          if: { not: { state: "sdist" }, "config-setting": { "mypkg.fast": true } },
          cmake: { args: ["-DFAST=1"] },
        },
        { if: { any: { state: "wheel" }, "platform-system": "linux" }, experimental: true },
      ],
    };
    it("accepts today's keys and conditions when minimum-version says 1.x", () => {
      const res = validate(modern);
      expect(res.errors).to.deep.equal([]);
      expect(res.generation).to.deep.include({ line: "1.x", explicit: false });
    });
    it("refuses them on the 0.12 line, naming the 1.x setting", () => {
      const res = validate(modern, { backendVersion: "0.12.2" });
      expect(res.valid).to.equal(false);
      const paths = codes(res.errors);
      for (const p of ["env", "config-setting", "cmake.fresh", "install.targets", "wheel.reproducible"])
        expect(paths).to.include(`unknown-key tool.scikit-build.${p}`);
      expect(paths).to.include("minimum-version tool.scikit-build.minimum-version");
    });
    it("evaluates if.not and if.config-setting from -C values", () => {
      const off = evaluate(modern, { state: "wheel", platformSystem: "linux", env: {} });
      expect(off.effective!.cmake.args).to.deep.equal([]);
      const on = evaluate(modern, {
        state: "wheel",
        platformSystem: "linux",
        env: {},
        configSettingArgs: { "mypkg.fast": "yes" },
      });
      expect(on.effective!.cmake.args).to.deep.equal(["-DFAST=1"]);
      expect(on.effective!.experimental).to.equal(true);
      expect(
        evaluate(modern, {
          state: "sdist",
          platformSystem: "linux",
          env: {},
          configSettingArgs: { "mypkg.fast": "1" },
        }).effective!.cmake.args,
      ).to.deep.equal([]);
    });
    it("gates explicit inclusion and resolve-symlinks by minimum-version", () => {
      const res = validate(
        { "minimum-version": "0.12", sdist: { "inclusion-mode": "explicit" } },
        { backendVersion: "1.1.2" },
      );
      expect(codes(res.errors)).to.deep.equal(["introduced tool.scikit-build.sdist.inclusion-mode"]);
      const sym = validate({ "minimum-version": "1.0", sdist: { "resolve-symlinks": "error" } });
      expect(codes(sym.errors)).to.deep.equal(["introduced tool.scikit-build.sdist.resolve-symlinks"]);
    });
    it("refuses an if.config-setting that is not declared", () => {
      const res = validate({
        "minimum-version": "1.1",
        overrides: [{ if: { "config-setting": { "x.y": "1" } }, experimental: true }],
      });
      expect(codes(res.errors)).to.deep.equal([
        'unknown-key tool.scikit-build.overrides[0].if.config-setting."x.y"',
      ]);
    });
  });
  it("schema of each line differs by the 1.x keys", async () => {
    const { schemaFor } = await import("../../skbuild-settings/index.js");
    const props = (l: "0.12" | "1.x") => Object.keys(schemaFor(l).properties as object);
    expect(props("1.x")).to.include.members(["env", "config-setting"]);
    expect(props("0.12")).to.not.include("env");
  });
  it("evaluateDocument of a pyproject picks the line from build-system.requires", () => {
    const doc = parseDocument(
      '[build-system]\nrequires = ["scikit-build-core>=1.0"]\n[tool.scikit-build]\nminimum-version = "build-system.requires"\nwheel.reproducible = true\n',
      "p.toml",
    );
    const ev = evaluateDocument(doc, NO_HOST);
    expect(ev.errors).to.deep.equal([]);
    expect(ev.generation.line).to.equal("1.x");
  });
});
