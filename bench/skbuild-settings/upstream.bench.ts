// Our settings reader against scikit-build-core's own, in the same run, on the same documents:
// the differential test's cases (the corpus in five build contexts and its mutations) for each
// pinned release. Each side reads the whole batch once to warm up, then ROUNDS times; the
// speed of a side is the median of its rounds, and the ratio is ours / upstream's.
//
//   npm run build && node dist/bench/skbuild-settings/upstream.bench.js [--rounds 7]
//
// Needs the releases installed by scripts/skbuild-oracle.sh. JSON: bench/results/settings-upstream.json.
import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fromRoot } from "../../common/paths.js";
import { buildCases } from "../../test/skbuild-settings/oracle/cases.js";
import { readWithOurs } from "../../test/skbuild-settings/oracle/compare.js";
import {
  ORACLE_RELEASES,
  readWithUpstream,
  timeUpstream,
} from "../../test/skbuild-settings/oracle/upstream.js";

const roundsAt = process.argv.indexOf("--rounds");
const ROUNDS = roundsAt >= 0 ? Number(process.argv[roundsAt + 1]) : 7;

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

const rows = [];
for (const release of ORACLE_RELEASES) {
  const { facts } = await readWithUpstream(release, []);
  const cases = buildCases(facts, release);
  const requests = cases.map((c) => ({ id: c.id, toml: c.toml, ...c.context }));
  const theirs = await timeUpstream(release, requests, ROUNDS);
  const read = () => {
    let accepted = 0;
    for (const c of cases) if (readWithOurs(c, facts, release).accepted) accepted++;
    return accepted;
  };
  read(); // warm-up, as upstream's side
  const ours: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const start = process.hrtime.bigint();
    read();
    ours.push(Number(process.hrtime.bigint() - start) / 1e9);
  }
  const oursPerSec = cases.length / median(ours);
  const theirsPerSec = cases.length / median(theirs);
  rows.push({
    release,
    documents: cases.length,
    oursDocsPerSec: Math.round(oursPerSec),
    upstreamDocsPerSec: Math.round(theirsPerSec),
    ratio: Number((oursPerSec / theirsPerSec).toFixed(1)),
    oursRoundSeconds: ours,
    upstreamRoundSeconds: theirs,
  });
}

const pad = (s: string | number, n: number) => String(s).padStart(n);
console.log(`settings reader vs scikit-build-core's, ${ROUNDS} rounds each, median of rounds (documents/s)`);
console.log(
  `${"release".padEnd(10)}${pad("documents", 11)}${pad("ours", 12)}${pad("upstream", 12)}${pad("ratio", 9)}`,
);
for (const r of rows)
  console.log(
    `${r.release.padEnd(10)}${pad(r.documents, 11)}${pad(r.oursDocsPerSec.toLocaleString("en-US"), 12)}${pad(r.upstreamDocsPerSec.toLocaleString("en-US"), 12)}${pad(`${r.ratio}x`, 9)}`,
  );

const out = fromRoot("bench", "results", "settings-upstream.json");
mkdirSync(path.dirname(out), { recursive: true });
writeFileSync(
  out,
  `${JSON.stringify({ benchmark: "settings reader: ours vs scikit-build-core", date: new Date().toISOString(), node: process.version, cpu: os.cpus()[0]?.model ?? "unknown", rounds: ROUNDS, rows }, null, 2)}\n`,
);
console.log(`wrote ${path.relative(process.cwd(), out)}`);
