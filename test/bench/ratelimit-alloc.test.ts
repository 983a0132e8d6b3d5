import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import { allocatedBytes, allocProbe } from "../../bench/ratelimit/alloc-count.js";
import { ServiceProcess } from "../support/process.js";

// What the rate limit bench reports as allocation per call: a process under the probe
// counts what it allocates, garbage collected on the way included.
describe("bench/ratelimit allocation probe", function () {
  this.timeout(30_000);
  const dir = mkdtempSync(path.join(tmpdir(), "alloc-probe-test-"));
  const probe = allocProbe(dir);
  // 10 000 arrays of 1 000 small integers (8 KB each on a 64-bit heap), all garbage, on each line read.
  const script = `
    let keep;
    process.stdin.on("data", () => {
      for (let i = 0; i < 10000; i++) keep = new Array(1000).fill(i);
      console.log("allocated " + keep.length);
    });
    console.log("ready");`;
  const child = new ServiceProcess(
    { file: process.execPath, cwd: process.cwd() },
    [...probe.nodeArgs, "-e", script],
    probe.env,
  );
  after(async () => {
    await child.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("counts the bytes allocated between two readings, collected ones included", async () => {
    await child.waitForOutput("ready");
    const pid = child.child.pid!;
    const before = await allocatedBytes(dir, [pid]);
    child.child.stdin!.write("go\n");
    await child.waitForOutput("allocated 1000");
    const after = await allocatedBytes(dir, [pid]);
    expect(before).to.be.a("number").and.not.NaN;
    const mb = (after - before) / 1e6;
    expect(mb).to.be.within(80, 90);
  });
});
