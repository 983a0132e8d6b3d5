// scikit-build-core as the oracle: the pinned releases' own settings reader and ours read the
// same documents (the shared corpus and mutations of it) in the same build contexts; any
// disagreement that the table of intended differences (skbuild-settings/README.md) does not explain fails.
import { mkdirSync, writeFileSync } from "node:fs";
import { expect } from "chai";
import { differential } from "./oracle/run.js";
import { ORACLE_RELEASES } from "./oracle/upstream.js";

describe("settings: differential test against scikit-build-core", function () {
  this.timeout(120_000);
  const summary: Record<string, unknown> = {};
  after(() => {
    mkdirSync("test-output", { recursive: true });
    writeFileSync("test-output/settings-differential.json", `${JSON.stringify(summary, null, 2)}\n`);
  });
  for (const release of ORACLE_RELEASES) {
    it(`agrees with scikit-build-core ${release} except for the intended differences`, async () => {
      const results = await differential(release);
      const agree = results.filter((r) => r.agree).length;
      const intended = results.filter((r) => !r.agree && r.intended);
      const unexplained = results.filter((r) => !r.agree && !r.intended);
      const byId: Record<string, number> = {};
      for (const r of intended) byId[r.intended!] = (byId[r.intended!] ?? 0) + 1;
      const byKind: Record<string, { documents: number; agree: number }> = {};
      for (const r of results) {
        const kind = r.id.split("/")[0]!;
        byKind[kind] ??= { documents: 0, agree: 0 };
        byKind[kind].documents++;
        if (r.agree) byKind[kind].agree++;
      }
      summary[release] = {
        byKind,
        documents: results.length,
        agree,
        agreementPercent: Number(((100 * agree) / results.length).toFixed(1)),
        intended: byId,
        unexplained: unexplained.map((r) => `${r.id}: ${r.detail}`),
      };
      console.log(
        `      scikit-build-core ${release}: ${results.length} documents, ${agree} agree (${((100 * agree) / results.length).toFixed(1)} %), ${intended.length} intended differences ${JSON.stringify(byId)}, ${unexplained.length} unexplained`,
      );
      expect(unexplained.map((r) => `${r.id}: ${r.detail}`)).to.deep.equal([]);
    });
  }
});
