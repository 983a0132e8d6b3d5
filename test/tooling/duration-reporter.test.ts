// The duration table at the end of a mocha run: the spec reporter's output stays, the files
// follow slowest first with their hooks counted, and every file goes to the JSON report.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { fromRoot } from "../../common/paths.js";
import { type DurationReport, durationTable, TABLE_ROWS } from "../support/duration-reporter.js";
import { runCommand } from "../support/process.js";

const REPORTER = fileURLToPath(new URL("../support/duration-reporter.js", import.meta.url));
const MOCHA = fromRoot("node_modules", "mocha", "bin", "mocha.js");

describe("duration reporter", function () {
  this.timeout(60_000);
  let dir: string;

  /** Test files of the runs below, by name: their sources. */
  const FIXTURES: Record<string, string> = {
    // A `before` waiting 400 ms: the file's time must include it.
    slow: 'describe("slow", () => {\n  before((done) => setTimeout(done, 400));\n  it("slow one", () => {});\n  it("slow two", () => {});\n});\n',
    // A `before` failing after 300 ms: its time counts, and so does the failure.
    "setup-fails":
      'describe("setup fails", () => {\n  before((done) => setTimeout(() => done(new Error("no server")), 300));\n  it("never runs", () => {});\n});\n',
    quick: 'describe("quick", () => { it("quick one", () => {}); });\n',
    broken: 'describe("broken", () => { it("broken one", () => { throw new Error("no"); }); });\n',
  };

  before(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), "etp-durations-"));
    for (const [name, source] of Object.entries(FIXTURES))
      writeFileSync(path.join(dir, `${name}.test.cjs`), source);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  for (const parallel of [false, true]) {
    it(`keeps the spec output, then prints and writes every file's time${parallel ? " (--parallel)" : ""}`, async () => {
      const output = path.join(dir, `durations-${parallel}.json`);
      const files = Object.keys(FIXTURES).map((n) => path.join(dir, `${n}.test.cjs`));
      const run = await runCommand({ file: process.execPath, cwd: dir }, [
        MOCHA,
        "--no-config",
        ...(parallel ? ["--parallel", "--jobs", "2"] : []),
        "--reporter",
        REPORTER,
        "--reporter-option",
        `output=${output}`,
        ...files,
      ]);
      expect(run.code, run.stderr).to.equal(2); // the two failures fail the run, as without the table
      const out = run.stdout;
      expect(out)
        .to.include("slow one")
        .and.include("quick one")
        .and.include("3 passing")
        .and.include("2 failing");
      const table = out.slice(out.indexOf("Slowest test files"));
      expect(out.indexOf("Slowest test files")).to.be.greaterThan(out.indexOf("3 passing"));
      expect(table).to.include("Slowest test files (4 of 4)").and.include("broken.test.cjs  (1 failed)");
      expect(table.indexOf("slow.test.cjs")).to.be.lessThan(table.indexOf("quick.test.cjs"));

      const report = JSON.parse(readFileSync(output, "utf8")) as DurationReport;
      expect(report.files.map((f) => [f.file, f.tests, f.failed])).to.deep.equal([
        ["slow.test.cjs", 2, 0],
        ...report.files.slice(1).map((f) => [f.file, f.tests, f.failed]),
      ]);
      expect(report.files.map((f) => f.file)).to.have.members([
        "slow.test.cjs",
        "quick.test.cjs",
        "broken.test.cjs",
        "setup-fails.test.cjs",
      ]);
      const setupFails = report.files.find((f) => f.file === "setup-fails.test.cjs")!;
      expect([setupFails.tests, setupFails.failed]).to.deep.equal([0, 1]);
      expect(setupFails.ms).to.be.at.least(300);
      expect(report.files[0]!.ms).to.be.at.least(400);
      expect(report.totalMs).to.be.at.least(report.files[0]!.ms);
    });
  }

  it("shows the slowest files first, at most the table's rows, and the totals of all", () => {
    const files = Array.from({ length: TABLE_ROWS + 5 }, (_, i) => ({
      file: `dist/test/f${String(i).padStart(2, "0")}.test.js`,
      ms: (TABLE_ROWS + 5 - i) * 1000,
      tests: 1,
      failed: 0,
    }));
    const table = durationTable({ totalMs: 123_456, files });
    expect(table).to.include(`Slowest test files (${TABLE_ROWS} of ${TABLE_ROWS + 5})`);
    expect(table).to.include("30.0 s       1  dist/test/f00.test.js");
    expect(table).to.include(`dist/test/f${TABLE_ROWS - 1}.test.js`);
    expect(table).to.not.include(`dist/test/f${TABLE_ROWS}.test.js`);
    expect(table).to.match(/465\.0 s\s+all files, tests and hooks/);
    expect(table).to.match(/123\.5 s\s+wall time of the run/);
  });
});
