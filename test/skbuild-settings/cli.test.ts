// tags: @long (over 45 s: among the first files the parallel suite starts)
// The command line, spawned as a user runs it: corpus, exit codes, formats, errors, --help.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { fromRoot } from "../../common/paths.js";

const CLI = fileURLToPath(new URL("../../cmd/skbuild-settings.js", import.meta.url));
const CORPUS = fromRoot("..", "shared", "conformance", "skbuild-corpus");
const corpusFiles = readdirSync(CORPUS)
  .filter((f) => f.endsWith(".toml"))
  .sort();

function run(args: string[], input?: string) {
  const res = spawnSync(process.execPath, [CLI, ...args], {
    encoding: "utf8",
    input,
    env: { PATH: process.env.PATH ?? "" },
  });
  return { code: res.status, stdout: res.stdout, stderr: res.stderr };
}

const tmp = mkdtempSync(path.join(os.tmpdir(), "skbuild-settings-test-"));
function file(name: string, text: string): string {
  const p = path.join(tmp, name);
  writeFileSync(p, text);
  return p;
}

/** Corpus files with deprecated keys and no minimum-version: warnings now, errors with backend 1.0. */
const DEPRECATED: Record<string, string> = {
  "07-pyzmq.toml": "tool.scikit-build.cmake.targets",
  "19-coreforecast.toml": "tool.scikit-build.cmake.verbose",
};

describe("skbuild-settings CLI", function () {
  this.timeout(20_000);

  it("finds the 20 conformance documents", () => {
    expect(corpusFiles).to.have.length(20);
  });

  describe("conformance corpus", () => {
    for (const name of corpusFiles) {
      it(`validates and evaluates ${name}`, () => {
        const doc = path.join(CORPUS, name);
        const v = run(["validate", "--format", "json", doc]);
        expect(v.code, v.stdout + v.stderr).to.equal(0);
        const report = JSON.parse(v.stdout);
        expect(report.files[0].errors).to.deep.equal([]);
        const warnings = report.files[0].warnings.map((w: { path: string }) => w.path);
        expect(warnings).to.deep.equal(DEPRECATED[name] ? [DEPRECATED[name]] : []);

        const e = run([
          "evaluate",
          "--no-host",
          "--state",
          "wheel",
          "--python",
          "3.12",
          "--format",
          "json",
          doc,
        ]);
        expect(e.code, e.stdout + e.stderr).to.equal(0);
        const ev = JSON.parse(e.stdout);
        expect(ev.valid).to.equal(true);
        expect(ev.settings.cmake).to.have.property("build-type");
      });
    }

    it("rejects the deprecated keys of 07 and 19 when following backend 1.0", () => {
      for (const [name, key] of Object.entries(DEPRECATED)) {
        const r = run(["validate", "--backend-version", "1.0.3", path.join(CORPUS, name)]);
        expect(r.code).to.equal(1);
        expect(r.stdout).to.contain(`error: ${key}: deprecated since 0.10`);
        expect(r.stdout).to.match(/use build\.(targets|verbose) instead/);
      }
    });

    it("validates the whole corpus in one call", () => {
      const r = run(["validate", ...corpusFiles.map((f) => path.join(CORPUS, f))]);
      expect(r.code).to.equal(0);
      expect(
        r.stdout
          .trim()
          .split("\n")
          .filter((l) => /: ok/.test(l)),
      ).to.have.length(20);
    });

    it("evaluates the overrides of 04-openimageio for macOS arm64 (inherit append)", () => {
      const r = run([
        "evaluate",
        "--no-host",
        "--platform-system",
        "darwin",
        "--platform-machine",
        "arm64",
        path.join(CORPUS, "04-openimageio.toml"),
      ]);
      expect(r.code).to.equal(0);
      const settings = JSON.parse(r.stdout);
      expect(settings.cmake.define).to.deep.include({ LINKSTATIC: "1", CMAKE_OSX_ARCHITECTURES: "arm64" });
      expect(settings["minimum-version"]).to.equal("0.10.6");
      expect(r.stderr).to.contain("matched overrides: tool.scikit-build.overrides[0]");
    });

    it("evaluates 02-spglib: without inherit the override replaces the define table", () => {
      const doc = path.join(CORPUS, "02-spglib.toml");
      const off = JSON.parse(run(["evaluate", "--no-host", doc]).stdout);
      expect(Object.keys(off.cmake.define)).to.have.length(3);
      const on = JSON.parse(run(["evaluate", "--no-host", "--env", "CIBUILDWHEEL=1", doc]).stdout);
      expect(on.cmake.define).to.deep.equal({ CMAKE_DISABLE_FIND_PACKAGE_Spglib: "ON" });
    });

    it("evaluates 13-pyarrow define {env, default} from --env", () => {
      const doc = path.join(CORPUS, "13-pyarrow.toml");
      const s = JSON.parse(
        run(["evaluate", "--no-host", "--env", "PYARROW_BUNDLE_ARROW_CPP=ON", doc]).stdout,
      );
      expect(s.cmake.define).to.deep.include({
        PYARROW_BUNDLE_ARROW_CPP: "ON",
        PYARROW_GENERATE_COVERAGE: "OFF",
      });
    });
  });

  describe("validate", () => {
    it("reports a misspelled key with its dotted path and a suggestion, exit 1", () => {
      const doc = file("typo.toml", '[tool.scikit-build]\ncmake.verison = ">=3.15"\n');
      const r = run(["validate", doc]);
      expect(r.code).to.equal(1);
      expect(r.stdout).to.contain(
        "error: tool.scikit-build.cmake.verison: unknown option -> did you mean: tool.scikit-build.cmake.version",
      );
    });
    it("turns unknown keys into warnings with strict-config = false, exit 0", () => {
      const doc = file(
        "lenient.toml",
        '[tool.scikit-build]\nstrict-config = false\ncmake.verison = ">=3.15"\n',
      );
      const r = run(["validate", doc]);
      expect(r.code).to.equal(0);
      expect(r.stdout).to.contain("ok, 1 warning").and.contain("warning: tool.scikit-build.cmake.verison");
    });
    it("prints machine-readable diagnostics with --format json", () => {
      const doc = file("bad.toml", "[tool.scikit-build]\nfail = true\nlogging.level = 'LOUD'\n");
      const r = run(["validate", "--format", "json", doc]);
      expect(r.code).to.equal(1);
      const report = JSON.parse(r.stdout);
      expect(report.valid).to.equal(false);
      expect(report.files[0].errors.map((e: { code: string }) => e.code)).to.deep.equal([
        "override-only",
        "enum",
      ]);
    });
    it("reads JSON settings documents and pyproject-shaped JSON", () => {
      const settings = file("settings.json", JSON.stringify({ cmake: { args: ["-DX=1"] } }));
      const shaped = file(
        "pyproject.json",
        JSON.stringify({ tool: { "scikit-build": { wheel: { cmake: 1 } } } }),
      );
      expect(run(["validate", settings]).code).to.equal(0);
      const r = run(["validate", shaped]);
      expect(r.code).to.equal(1);
      expect(r.stdout).to.contain("tool.scikit-build.wheel.cmake: expected a boolean, got a number (1)");
    });
    it("reads standard input with -", () => {
      const r = run(["validate", "--input-format", "json", "-"], '{"experimental": "yes"}');
      expect(r.code).to.equal(1);
      expect(r.stdout).to.contain("<stdin>: 1 error");
    });
    it("gives a clear error for malformed TOML, with line and column", () => {
      const doc = file("broken.toml", "[tool.scikit-build]\ncmake.args = [\n");
      const r = run(["validate", doc]);
      expect(r.code).to.equal(1);
      expect(r.stdout).to.match(/malformed TOML at line \d+, column \d+/);
    });
    it("gives a clear error for malformed JSON, with line and column", () => {
      const doc = file("broken.json", '{\n  "cmake": {\n    "args": [1,,]\n}');
      const r = run(["validate", doc]);
      expect(r.code).to.equal(1);
      expect(r.stdout).to.match(/malformed JSON at line 3, column \d+/);
    });
    it("exits 2 when one of several files is missing, still checking the others", () => {
      const ok = file("fine.toml", "[tool.scikit-build]\nexperimental = true\n");
      const r = run(["validate", path.join(tmp, "missing.toml"), ok]);
      expect(r.code).to.equal(2);
      expect(r.stdout).to.contain("fine.toml: ok");
    });
    it("exits 2 for a missing file", () => {
      const r = run(["validate", path.join(tmp, "nope.toml")]);
      expect(r.code).to.equal(2);
      expect(r.stderr).to.contain("nope.toml: cannot read: no such file");
    });
    it("warns when a pyproject.toml has no [tool.scikit-build] table", () => {
      const doc = file("empty.toml", '[project]\nname = "x"\n');
      const r = run(["validate", doc]);
      expect(r.code).to.equal(0);
      expect(r.stdout).to.contain("no [tool.scikit-build] table");
    });
    it("--quiet prints only documents with problems", () => {
      const ok = file("ok.toml", "[tool.scikit-build]\nexperimental = true\n");
      const bad = file("bad2.toml", "[tool.scikit-build]\nexperimental = 1\n");
      const r = run(["validate", "-q", ok, bad]);
      expect(r.code).to.equal(1);
      expect(r.stdout).to.not.contain("ok.toml");
      expect(r.stdout).to.contain("bad2.toml: 1 error");
    });
  });

  describe("evaluate", () => {
    const doc = () =>
      file(
        "ev.toml",
        [
          "[tool.scikit-build]",
          'cmake.args = ["-DBASE=1"]',
          "[[tool.scikit-build.overrides]]",
          'if.python-version = ">=3.12"',
          'inherit.cmake.args = "append"',
          'cmake.args = ["-DNEW=1"]',
          "[[tool.scikit-build.overrides]]",
          'if.platform-system = "win32"',
          "fail = true",
          "[[tool.scikit-build.overrides]]",
          "if.failed = true",
          'build.tool-args = ["-j1"]',
        ].join("\n"),
      );
    it("prints effective settings as JSON for the given context", () => {
      const r = run(["evaluate", "--no-host", "--state", "wheel", "--python", "3.12", doc()]);
      expect(r.code).to.equal(0);
      expect(JSON.parse(r.stdout).cmake.args).to.deep.equal(["-DBASE=1", "-DNEW=1"]);
      expect(r.stderr).to.contain("a failed build would be retried");
    });
    it("exits 3 when a matching override sets fail = true", () => {
      const r = run(["evaluate", "--no-host", "--platform-system", "win32", "--format", "json", doc()]);
      expect(r.code).to.equal(3);
      const report = JSON.parse(r.stdout);
      expect(report).to.deep.include({ fail: true, failOverrides: [1], retryOnFailure: true, matched: [1] });
    });
    it("takes platform facts and the environment from this machine unless --no-host", () => {
      const system =
        { linux: "linux", darwin: "darwin", win32: "win32" }[process.platform as string] ?? process.platform;
      const doc2 = file(
        "host.toml",
        [
          "[tool.scikit-build]",
          "[[tool.scikit-build.overrides]]",
          `if.platform-system = "^${system}$"`,
          'build-dir = "host"',
          "[[tool.scikit-build.overrides]]",
          'if.env.PATH = ".+"',
          "experimental = true",
        ].join("\n"),
      );
      const host = JSON.parse(run(["evaluate", doc2]).stdout);
      expect(host).to.deep.include({ "build-dir": "host", experimental: true });
      const bare = run(["evaluate", "--no-host", doc2]);
      expect(JSON.parse(bare.stdout)).to.deep.include({ "build-dir": "", experimental: false });
      expect(bare.stderr).to.contain("give --platform-system");
      const noEnv = JSON.parse(run(["evaluate", "--no-process-env", doc2]).stdout);
      expect(noEnv).to.deep.include({ "build-dir": "host", experimental: false });
    });
    it("--cmake-wheel/--no-cmake-wheel and --system-cmake/--no-system-cmake feed their conditions", () => {
      const doc3 = file(
        "cw.toml",
        [
          "[tool.scikit-build]",
          "[[tool.scikit-build.overrides]]",
          "if.cmake-wheel = true",
          'build-dir = "cw"',
          "[[tool.scikit-build.overrides]]",
          'if.system-cmake = ">=3.20"',
          "experimental = true",
        ].join("\n"),
      );
      const ev = (...flags: string[]) => {
        const r = run(["evaluate", "--no-host", ...flags, doc3]);
        const s = JSON.parse(r.stdout);
        return { dir: s["build-dir"], exp: s.experimental, stderr: r.stderr };
      };
      const none = ev();
      expect(none).to.include({ dir: "", exp: false });
      expect(none.stderr).to.contain("give --cmake-wheel or --no-cmake-wheel");
      expect(ev("--cmake-wheel")).to.include({ dir: "cw" });
      expect(ev("--no-cmake-wheel")).to.include({ dir: "" });
      expect(ev("--system-cmake", "3.10", "--system-cmake", "3.22")).to.include({ exp: true });
      expect(ev("--system-cmake", "3.10")).to.include({ exp: false });
      const noCmake = ev("--no-system-cmake");
      expect(noCmake).to.include({ exp: false });
      expect(noCmake.stderr).to.not.contain("system-cmake");
    });
    it("--failed applies the retry override", () => {
      const r = run(["evaluate", "--no-host", "--failed", doc()]);
      expect(JSON.parse(r.stdout).build["tool-args"]).to.deep.equal(["-j1"]);
    });
    it("exits 1 and evaluates nothing for an invalid document", () => {
      const bad = file("bad-ev.toml", "[tool.scikit-build]\ncmake.verison = '3'\n");
      const r = run(["evaluate", bad]);
      expect(r.code).to.equal(1);
      expect(r.stdout).to.equal("");
      expect(r.stderr).to.contain("nothing evaluated");
    });
    it("rejects bad flag values with exit 2", () => {
      for (const args of [["--state", "bdist"], ["--python", "three"], ["--env", "NOEQUALS"], ["--bogus"]]) {
        const r = run(["evaluate", ...args, doc()]);
        expect(r.code, args.join(" ")).to.equal(2);
        expect(r.stderr, args.join(" ")).to.match(/error/);
      }
    });
  });

  describe("help and schema", () => {
    it("--help lists the commands and exit codes, exit 0", () => {
      const r = run(["--help"]);
      expect(r.code).to.equal(0);
      expect(r.stdout).to.contain("validate").and.contain("evaluate").and.contain("Exit codes");
    });
    it("--version prints the version, exit 0", () => {
      const r = run(["--version"]);
      expect(r.code).to.equal(0);
      expect(r.stdout.trim()).to.match(/^\d+\.\d+\.\d+$/);
    });
    it("output into a reader that already left (`| head`) ends quietly with the command's own exit code", async () => {
      const broken = file("broken-for-pipe.toml", "[tool.scikit-build]\nbuild-dir = 3\n");
      for (const [args, code] of [
        [["--help"], 0],
        [["schema"], 0],
        [["validate", broken], 1],
      ] as const) {
        const child = spawn(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH ?? "" } });
        child.stdout.destroy(); // the reader is gone before the first write
        let stderr = "";
        child.stderr.on("data", (d) => {
          stderr += d;
        });
        const exit = await new Promise<number | null>((resolve) => child.once("close", resolve));
        expect(stderr, args.join(" ")).to.not.contain("EPIPE");
        expect(exit, `${args.join(" ")}: ${stderr}`).to.equal(code);
      }
    });
    it("evaluate --help lists the context flags", () => {
      const r = run(["evaluate", "--help"]);
      expect(r.code).to.equal(0);
      for (const flag of [
        "--state",
        "--python",
        "--platform-system",
        "--system-cmake",
        "--abi-flags",
        "--env",
        "--format",
      ])
        expect(r.stdout).to.contain(flag);
    });
    it("schema prints the JSON Schema", () => {
      const r = run(["schema"]);
      expect(r.code).to.equal(0);
      const schema = JSON.parse(r.stdout);
      expect(schema.$schema).to.contain("draft-07");
      expect(schema.properties).to.have.property("overrides");
      expect(schema.properties).to.not.have.property("env");
    });
    it("schema prints the 1.x line's schema for --backend-version 1.1 or a 1.x document", () => {
      const flagged = JSON.parse(run(["schema", "--backend-version", "1.1"]).stdout);
      expect(flagged.properties).to.include.keys("env", "config-setting");
      const doc = file("modern.toml", '[tool.scikit-build]\nminimum-version = "1.0"\n');
      const chosen = run(["schema", doc]);
      expect(chosen.code).to.equal(0);
      expect(JSON.parse(chosen.stdout).properties).to.have.property("env");
    });
  });
  describe("generations and bytes", () => {
    it("validates a 1.x document on the 1.x line chosen from its minimum-version, and refuses it with --backend-version 0.12", () => {
      const doc = file(
        "today.toml",
        '[tool.scikit-build]\nminimum-version = "1.1"\nwheel.reproducible = true\ninstall.targets = ["py"]\n[tool.scikit-build.env]\nCC = "clang"\n',
      );
      expect(run(["validate", doc]).code).to.equal(0);
      const old = run(["validate", "--backend-version", "0.12.2", doc]);
      expect(old.code).to.equal(1);
      expect(old.stdout).to.contain("tool.scikit-build.env: unknown option");
      expect(old.stdout).to.contain("minimum-version 1.1 is newer than backend version 0.12.2");
    });
    it("refuses a file that is not UTF-8 or starts with a byte order mark", () => {
      const p = path.join(tmp, "latin1.toml");
      writeFileSync(p, Buffer.from([0x5b, 0x61, 0x5d, 0x0a, 0x62, 0x20, 0x3d, 0x20, 0x22, 0xe9, 0x22, 0x0a]));
      const r = run(["validate", p]);
      expect(r.code).to.equal(1);
      expect(r.stdout).to.contain("not valid UTF-8");
      const bom = file("bom.toml", "\ufeff[tool.scikit-build]\n");
      expect(run(["validate", bom]).stdout).to.contain("byte order mark");
    });
  });
});
