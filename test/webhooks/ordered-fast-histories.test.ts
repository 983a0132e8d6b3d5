import { readdirSync } from "node:fs";
import { expect } from "chai";
import { fromRoot } from "../../common/paths.js";
import { ORDERED_FAST_SCENARIOS, ORDERED_FAST_SET } from "../support/history-sets.js";

// The key's workflow since its patch ordered-first-send-here (it makes the first sends):
// replayed with every other set by replay-histories.test.ts; this checks the set covers its paths.
describe("recorded histories of the ordered-delivery workflow's own first sends", () => {
  it("has every path of the first send made by the key's workflow recorded", () => {
    const names = readdirSync(fromRoot("test", "histories", ORDERED_FAST_SET)).map((f) =>
      f.replace(/\.json$/, ""),
    );
    expect(names).to.include.members([...ORDERED_FAST_SCENARIOS]);
  });
});
