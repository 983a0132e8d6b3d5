import { expect } from "chai";
import { listenArg, listOption, positiveIntArg } from "../../common/flags.js";

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
});
