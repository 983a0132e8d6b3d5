import { expect } from "chai";
import {
  bytesArg,
  durationListArg,
  listenArg,
  listOption,
  nonNegativeDurationArg,
  positiveIntArg,
} from "../../common/flags.js";

describe("flag parsers", () => {
  it("replaces a list default with the given values, then accumulates repeats", () => {
    const topics = listOption(["default"]);
    let value = topics.defaults;
    for (const given of ["a,b", " c "]) value = topics.parse(given, value);
    expect(value).to.deep.equal(["a", "b", "c"]);
    expect(topics.defaults).to.deep.equal(["default"]);
    expect(() => topics.parse(" , ", topics.defaults)).to.throw("at least one value");
  });

  it("reads Go-style listen addresses", () => {
    expect(listenArg(":8080")).to.deep.equal({ host: "0.0.0.0", port: 8080 });
    expect(listenArg("127.0.0.1:9")).to.deep.equal({ host: "127.0.0.1", port: 9 });
    expect(listenArg("[::1]:443")).to.deep.equal({ host: "::1", port: 443 });
    for (const bad of ["8080", "host", ":99999", "a:b"]) expect(() => listenArg(bad), bad).to.throw(bad);
  });

  it("accepts only positive integers", () => {
    expect(positiveIntArg("15")).to.equal(15);
    for (const bad of ["0", "-1", "1.5", "x", ""]) expect(() => positiveIntArg(bad), bad).to.throw();
  });

  it("reads sizes in bytes, decimal and binary units", () => {
    expect(bytesArg("0")).to.equal(0);
    expect(bytesArg("1024")).to.equal(1024);
    expect(bytesArg("512MB")).to.equal(512_000_000);
    expect(bytesArg("1GiB")).to.equal(2 ** 30);
    expect(bytesArg("1.5 kib")).to.equal(1536);
    for (const bad of ["", "-1", "1GB2", "1 parsec", "GiB"]) {
      expect(() => bytesArg(bad), bad).to.throw(
        `expected a size such as "1GiB", "512MB" or a number of bytes, got "${bad}"`,
      );
    }
  });

  it("refuses negative durations where 0 means none", () => {
    expect(nonNegativeDurationArg("0")).to.equal(0);
    expect(nonNegativeDurationArg("1m")).to.equal(60_000);
    expect(() => nonNegativeDurationArg("-1s")).to.throw('got "-1s"');
  });

  it("reads a list of positive durations", () => {
    expect(durationListArg("1s, 30s,5m")).to.deep.equal([1000, 30_000, 300_000]);
    for (const bad of ["", "1s,,2s", "1s,0", "1s,soon"]) expect(() => durationListArg(bad), bad).to.throw();
  });
});
