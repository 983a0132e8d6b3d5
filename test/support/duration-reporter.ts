import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import Mocha from "mocha";

// Mocha's spec reporter, then a table of the time each test file took, slowest first (the
// top 25 and the total), also written as JSON (reporter option `output`, default
// test-output/test-durations.json). A file's time is what its tests and hooks took (the
// servers a `before` starts included), summed from the durations mocha records: those
// also arrive from --parallel workers, where event times would not tell.
// Used by the mocha configs: --reporter dist/test/support/duration-reporter.js.

const { EVENT_HOOK_END, EVENT_RUN_BEGIN, EVENT_RUN_END, EVENT_TEST_END, EVENT_TEST_FAIL, EVENT_TEST_RETRY } =
  Mocha.Runner.constants;

export const TABLE_ROWS = 25;
const DEFAULT_OUTPUT = "test-output/test-durations.json";
/** Hooks of the root suite (test/support/hooks.ts) belong to no file. */
const ROOT_HOOKS = "(root hooks)";

export interface FileDuration {
  file: string;
  ms: number;
  tests: number;
  failed: number;
}

export interface DurationReport {
  /** Wall time of the whole run. */
  totalMs: number;
  /** Every file, slowest first. */
  files: FileDuration[];
}

export default class DurationReporter extends Mocha.reporters.Spec {
  constructor(runner: Mocha.Runner, options: Mocha.MochaOptions) {
    super(runner, options);
    const output = (options.reporterOptions as { output?: string } | undefined)?.output ?? DEFAULT_OUTPUT;
    const files = new Map<string, FileDuration>();
    const entry = (file: string | undefined) => {
      const name = file ? path.relative(process.cwd(), file) : ROOT_HOOKS;
      const e = files.get(name) ?? { file: name, ms: 0, tests: 0, failed: 0 };
      files.set(name, e);
      return e;
    };
    let started = Date.now();
    runner.once(EVENT_RUN_BEGIN, () => {
      started = Date.now();
    });
    runner.on(EVENT_HOOK_END, (hook: Mocha.Hook) => {
      entry(hook.file).ms += hook.duration ?? 0;
    });
    // A failing hook ends with EVENT_TEST_FAIL instead (a failing test also gets EVENT_TEST_END).
    // (From --parallel workers a hook arrives as a plain object: its `type` tells, not its class.)
    runner.on(EVENT_TEST_FAIL, (runnable: Mocha.Runnable & { type?: string }) => {
      if (runnable.type !== "hook") return;
      const e = entry(runnable.file);
      e.ms += runnable.duration ?? 0;
      e.failed++;
    });
    // A retried attempt ends with EVENT_TEST_RETRY, the last one with EVENT_TEST_END.
    runner.on(EVENT_TEST_RETRY, (test: Mocha.Test) => {
      entry(test.file).ms += test.duration ?? 0;
    });
    runner.on(EVENT_TEST_END, (test: Mocha.Test) => {
      const e = entry(test.file);
      e.ms += test.duration ?? 0;
      e.tests++;
      if (test.state === "failed") e.failed++;
    });
    // Registered after the spec reporter's own listener: the table comes after its summary.
    runner.once(EVENT_RUN_END, () => {
      const report: DurationReport = {
        totalMs: Date.now() - started,
        files: [...files.values()].sort((a, b) => b.ms - a.ms || a.file.localeCompare(b.file)),
      };
      process.stdout.write(durationTable(report));
      mkdirSync(path.dirname(path.resolve(output)), { recursive: true });
      writeFileSync(output, `${JSON.stringify(report, null, 2)}\n`);
      process.stdout.write(`  (every file's time: ${output})\n\n`);
    });
  }
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** The slowest TABLE_ROWS files and the totals, as printed at the end of a run. */
export function durationTable(report: DurationReport): string {
  const top = report.files.slice(0, TABLE_ROWS);
  const sum = report.files.reduce((s, f) => s + f.ms, 0);
  const width = Math.max(4, ...top.map((f) => f.file.length));
  const line = (time: string, tests: string, file: string) =>
    `  ${time.padStart(9)}  ${tests.padStart(6)}  ${file}`;
  const rows = top.map((f) =>
    line(seconds(f.ms), String(f.tests), f.failed ? `${f.file}  (${f.failed} failed)` : f.file),
  );
  return [
    "",
    `  Slowest test files (${top.length} of ${report.files.length}):`,
    "",
    line("time", "tests", "file"),
    `  ${"-".repeat(9)}  ${"-".repeat(6)}  ${"-".repeat(width)}`,
    ...rows,
    "",
    line(seconds(sum), "", "all files, tests and hooks"),
    line(seconds(report.totalMs), "", "wall time of the run"),
    "",
    "",
  ].join("\n");
}
