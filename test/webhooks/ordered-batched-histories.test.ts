import { readdirSync } from "node:fs";
import { expect } from "chai";
import { fromRoot } from "../../common/paths.js";
import { ORDERED_BATCHED_SCENARIOS, ORDERED_BATCHED_SET } from "../support/history-sets.js";

// The key's workflow since its patch ordered-batches (a batched ordered config sends its queue
// in batches): replayed with every other set by replay-histories.test.ts; this checks the set
// covers its paths.
describe("recorded histories of the ordered-delivery workflow's batches", () => {
  it("has every path of a key's batches recorded", () => {
    const names = readdirSync(fromRoot("test", "histories", ORDERED_BATCHED_SET)).map((f) =>
      f.replace(/\.json$/, ""),
    );
    expect(names).to.include.members([...ORDERED_BATCHED_SCENARIOS]);
  });
});
