import { readdirSync } from "node:fs";
import { expect } from "chai";
import { fromRoot } from "../../common/paths.js";
import {
  ORDERED_BATCHED_SCENARIOS,
  ORDERED_FAST_SCENARIOS,
  ORDERED_SCENARIOS,
  ORDERED_SET,
  SEQUENCER_SET,
} from "../support/history-sets.js";

// The ordered workflows' recorded histories are replayed with every other set by
// replay-histories.test.ts; this checks their sets cover every path.
describe("recorded histories of the ordered workflows", () => {
  it("has every path of workflows/key-sequencer.ts recorded", () => {
    const names = readdirSync(fromRoot("test", "histories", SEQUENCER_SET)).map((f) =>
      f.replace(/\.json$/, ""),
    );
    expect(names).to.include.members([
      ...ORDERED_SCENARIOS,
      ...ORDERED_FAST_SCENARIOS,
      ...ORDERED_BATCHED_SCENARIOS,
    ]);
  });

  it("keeps the sets of workflows/ordered-delivery.ts, the earlier shape", () => {
    const names = readdirSync(fromRoot("test", "histories", ORDERED_SET)).map((f) =>
      f.replace(/\.json$/, ""),
    );
    expect(names).to.include.members([...ORDERED_SCENARIOS]);
  });
});
