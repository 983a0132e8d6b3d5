import { expect } from "chai";
import { formatDuration, parseDuration } from "../../common/duration.js";

describe("Go-style durations", () => {
  const cases: [string, number][] = [
    ["3s", 3000],
    ["1m", 60_000],
    ["720h", 2_592_000_000],
    ["1h30m", 5_400_000],
    ["1.5s", 1500],
    ["300ms", 300],
    ["0", 0],
    ["2h45m30.5s", 9_930_500],
    ["-1m", -60_000],
  ];
  for (const [text, ms] of cases) {
    it(`parses ${text}`, () => expect(parseDuration(text)).to.equal(ms));
  }
  for (const bad of ["", "3", "s", "3x", "1h 30m", "abc", "--1s"]) {
    it(`rejects "${bad}" naming it`, () => expect(() => parseDuration(bad)).to.throw(`"${bad}"`));
  }
  it("formats like Go", () => {
    expect(formatDuration(3_600_000)).to.equal("1h0m0s");
    expect(formatDuration(1500)).to.equal("1.5s");
    expect(formatDuration(90_000)).to.equal("1m30s");
    expect(formatDuration(250)).to.equal("250ms");
  });
});
