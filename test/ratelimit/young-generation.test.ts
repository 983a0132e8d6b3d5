// A process serving by itself holds its young generation to the serving processes' bound
// (ratelimit/processes/young-generation.ts): a node process that allocates short-lived
// objects quickly grows its new space to Node's 2 × 16 MB, and to no more than 2 × 4 MB with
// the hold. Both run as child processes so each has a heap of its own.

import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { expect } from "chai";
import { fromRoot } from "../../common/paths.js";
import { holdsOwnYoungGeneration, SERVING_SEMI_SPACE_MB } from "../../ratelimit/processes/heap-flags.js";

const run = promisify(execFile);
const MODULE = fromRoot("dist", "ratelimit", "processes", "young-generation.js");

/** The largest new space (MB) of a child that allocates 400 rounds of garbage, with or without the hold. */
async function largestNewSpaceMb(hold: boolean): Promise<number> {
  const script = `
    const { holdYoungGeneration, newSpaceBytes } = await import(${JSON.stringify(MODULE)});
    if (${hold}) holdYoungGeneration(${SERVING_SEMI_SPACE_MB});
    let keep = [];
    let largest = 0;
    for (let round = 0; round < 400; round++) {
      for (let i = 0; i < 20000; i++) {
        keep.push({ i, s: "x" + i });
        if (keep.length > 40000) keep = [];
      }
      largest = Math.max(largest, newSpaceBytes());
      await new Promise((r) => setImmediate(r));
    }
    console.log(largest / 1048576);
  `;
  const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script], {
    env: { ...process.env, NODE_OPTIONS: "" },
  });
  return Number(stdout.trim());
}

describe("ratelimit: the young generation of a process serving by itself", function () {
  this.timeout(60_000);

  it("grows past 2 × 4 MB without the hold and stays within it with the hold", async () => {
    expect(await largestNewSpaceMb(false)).to.be.greaterThan(2 * SERVING_SEMI_SPACE_MB);
    expect(await largestNewSpaceMb(true)).to.be.at.most(2 * SERVING_SEMI_SPACE_MB);
  });

  it("is held unless node was started with a young-generation size", () => {
    expect(holdsOwnYoungGeneration([], "")).to.equal(true);
    expect(holdsOwnYoungGeneration(["--enable-source-maps"], "--trace-warnings")).to.equal(true);
    expect(holdsOwnYoungGeneration(["--max-semi-space-size=16"], "")).to.equal(false);
    expect(holdsOwnYoungGeneration([], "--max_semi_space_size=2")).to.equal(false);
  });
});
