// Benchmark of the build-settings validator over the conformance corpus.
//
//   npx tsc -p tsconfig.json && node dist/bench/skbuild-settings/validate.bench.js [--rounds 15] [--ms 300]
//
// Baseline: ajv-only validation (the compiled schema, no semantic rules, no diagnostics) run in the
// same process on the same documents. Every other row is quoted as a ratio of its median
// throughput to the baseline's median. Results go to bench/results/settings-validate.json.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parse as parseToml } from "smol-toml";
import { fromRoot } from "../../common/paths.js";
import { schemaValidator } from "../../skbuild-settings/compile.js";
import {
  type BuildContext,
  evaluateDocument,
  parseDocument,
  type SettingsDocument,
  validateDocument,
} from "../../skbuild-settings/index.js";

function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}
const ROUNDS = flag("--rounds", 15);
const ROUND_MS = flag("--ms", 300);

const corpusDir = fromRoot("..", "shared", "conformance", "skbuild-corpus");
const texts = readdirSync(corpusDir)
  .filter((f) => f.endsWith(".toml"))
  .sort()
  .map((f) => ({ name: f, text: readFileSync(path.join(corpusDir, f), "utf8") }));
const docs: SettingsDocument[] = texts.map((t) => parseDocument(t.text, t.name));
const context: BuildContext = {
  state: "wheel",
  pythonVersion: "3.12",
  implementationName: "cpython",
  implementationVersion: "3.12.4",
  platformSystem: "linux",
  platformMachine: "x86_64",
  platformNode: "bench",
  abiFlags: "",
  systemCmake: "3.28.3",
  cmakeWheel: true,
  env: { CIBUILDWHEEL: "1" },
};

let sink = 0; // keeps results alive so the work is not optimised away

/** Runs `fn` over all documents for about ROUND_MS; returns documents per second. */
function round(fn: (doc: SettingsDocument, i: number) => unknown): number {
  const n = docs.length;
  let done = 0;
  const start = process.hrtime.bigint();
  const deadline = start + BigInt(ROUND_MS) * 1_000_000n;
  let now = start;
  while (now < deadline) {
    for (let k = 0; k < 200; k++) {
      const i = done % n;
      if (fn(docs[i]!, i)) sink++;
      done++;
    }
    now = process.hrtime.bigint();
  }
  return done / (Number(now - start) / 1e9);
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

const validator = schemaValidator();
const cases: { name: string; what: string; fn: (doc: SettingsDocument, i: number) => unknown }[] = [
  { name: "ajv-only (baseline)", what: "compiled schema only", fn: (d) => validator(d.settings ?? {}) },
  {
    name: "validate",
    what: "schema + semantic + minimum-version rules",
    fn: (d) => validateDocument(d).valid,
  },
  {
    name: "parse + validate",
    what: "TOML text -> diagnostics",
    fn: (_d, i) => validateDocument(parseDocument(texts[i]!.text, texts[i]!.name)).valid,
  },
  {
    name: "evaluate",
    what: "validate + overrides + defaults",
    fn: (d) => evaluateDocument(d, context).valid,
  },
  { name: "TOML parse only", what: "smol-toml, for scale", fn: (_d, i) => parseToml(texts[i]!.text) },
];

// Sanity: the corpus is valid, so the rows measure the success path.
for (const d of docs) if (!validateDocument(d).valid) throw new Error(`${d.source} is not valid`);

// Warm-up, then interleaved rounds so drift affects every case alike.
for (const c of cases) round(c.fn);
const samples = new Map<string, number[]>(cases.map((c) => [c.name, []]));
for (let r = 0; r < ROUNDS; r++) for (const c of cases) samples.get(c.name)!.push(round(c.fn));

const baseline = median(samples.get(cases[0]!.name)!);
const rows = cases.map((c) => {
  const s = samples.get(c.name)!;
  const med = median(s);
  return {
    name: c.name,
    what: c.what,
    medianDocsPerSec: Math.round(med),
    minDocsPerSec: Math.round(Math.min(...s)),
    maxDocsPerSec: Math.round(Math.max(...s)),
    medianMicrosPerDoc: Number((1e6 / med).toFixed(2)),
    ratioToBaseline: Number((med / baseline).toFixed(3)),
  };
});

const pad = (s: string | number, n: number, right = false) =>
  right ? String(s).padStart(n) : String(s).padEnd(n);
console.log(
  `skbuild-settings benchmark: ${docs.length} corpus documents, ${ROUNDS} rounds x ${ROUND_MS} ms, median of rounds`,
);
console.log(
  `${pad("case", 22)}${pad("docs/s (median)", 17, true)}${pad("us/doc", 10, true)}${pad("x baseline", 12, true)}  what`,
);
for (const r of rows) {
  console.log(
    `${pad(r.name, 22)}${pad(r.medianDocsPerSec.toLocaleString("en-US"), 17, true)}${pad(r.medianMicrosPerDoc, 10, true)}${pad(r.ratioToBaseline, 12, true)}  ${r.what}`,
  );
}
const validateRow = rows.find((r) => r.name === "validate")!;
const target = 20_000;
console.log(
  `target >= ${target.toLocaleString("en-US")} validations/s: ${validateRow.medianDocsPerSec >= target ? "met" : "NOT met"} (${validateRow.medianDocsPerSec.toLocaleString("en-US")}/s)`,
);

const out = fromRoot("bench", "results", "settings-validate.json");
mkdirSync(path.dirname(out), { recursive: true });
writeFileSync(
  out,
  `${JSON.stringify(
    {
      benchmark: "skbuild-settings validate/evaluate over the conformance corpus",
      date: new Date().toISOString(),
      node: process.version,
      cpu: os.cpus()[0]?.model ?? "unknown",
      documents: docs.length,
      rounds: ROUNDS,
      roundMs: ROUND_MS,
      baseline: cases[0]!.name,
      rows,
      targetValidationsPerSec: target,
      targetMet: validateRow.medianDocsPerSec >= target,
      sink,
    },
    null,
    2,
  )}\n`,
);
console.log(`wrote ${path.relative(process.cwd(), out)}`);
