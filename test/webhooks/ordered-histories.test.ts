import { readdirSync } from "node:fs";
import { expect } from "chai";
import { fromRoot } from "../../common/paths.js";
import { ORDERED_SCENARIOS, ORDERED_SET } from "../support/history-sets.js";

// The ordered-delivery workflow's recorded histories are replayed with every other set by
// replay-histories.test.ts; this checks its set covers every path.
describe("recorded histories of the ordered-delivery workflow", () => {
  it("has every path of workflows/ordered-delivery.ts recorded", () => {
    const names = readdirSync(fromRoot("test", "histories", ORDERED_SET)).map((f) =>
      f.replace(/\.json$/, ""),
    );
    expect(names).to.include.members([...ORDERED_SCENARIOS]);
  });
});
