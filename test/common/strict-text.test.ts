import { expect } from "chai";
import {
  assertNoDuplicateKeys,
  escapeUnstorable,
  unstorableJson,
  unstorableText,
} from "../../common/strict-text.js";
import { parseEventMessage } from "../../core/event-message.js";

describe("strict text checks (common/strict-text.ts)", () => {
  const deep = (depth: number, inner: string) =>
    `{"type":"t","payload":${'{"a":'.repeat(depth)}${inner}${"}".repeat(depth)}}`;

  it("checks any depth JSON.parse accepts (a recursive walk overflowed near 5 000 levels)", () => {
    const text = deep(100_000, '{"b":"\\u0000"}');
    const problem = unstorableText(JSON.parse(text));
    expect(problem).to.match(/^payload(\.a){100000}\.b: contains a NUL character$/);
    expect(() => assertNoDuplicateKeys(deep(100_000, '{"b":1,"b":2}'), Number.POSITIVE_INFINITY)).to.throw(
      /^duplicate key "payload(\.a){100000}\.b" in the JSON body$/,
    );
    expect(() => assertNoDuplicateKeys(deep(100_000, "1"), Number.POSITIVE_INFINITY)).not.to.throw();
  });

  it("refuses request bodies nesting deeper than MAX_JSON_DEPTH, by default", () => {
    expect(() => assertNoDuplicateKeys(`${"[".repeat(1000)}${"]".repeat(1000)}`)).not.to.throw();
    expect(() => assertNoDuplicateKeys(`${"[".repeat(1001)}${"]".repeat(1001)}`)).to.throw(
      "the JSON nests deeper than 1000 levels",
    );
  });

  it("reports the first problem in document order, keys before their values, with its path", () => {
    expect(unstorableText({ a: ["ok", { "k\u0000": "\ud800" }], b: "\u0000" })).to.equal(
      "key of a[1].k\u0000: contains a NUL character",
    );
    expect(unstorableText([1, { b: ["\ud800"] }])).to.equal(
      "[1].b[0]: contains a lone surrogate (not valid Unicode)",
    );
    expect(unstorableText({ x: ["a", "b\u0000"] }, "q")).to.equal("q.x[1]: contains a NUL character");
    expect(unstorableText("\u0000", "a parameter name")).to.equal(
      "a parameter name: contains a NUL character",
    );
    expect(unstorableText({ ok: "a pair \ud83d\ude00 is fine" })).to.equal(undefined);
    expect(() => assertNoDuplicateKeys('{"a":[{"b":1},{"b":1,"c":{"d":1,"d":2}}]}')).to.throw(
      'duplicate key "a[1].c.d" in the JSON body',
    );
    expect(() => assertNoDuplicateKeys('{"a":{"b":1},"c":{"b":1}}')).not.to.throw();
  });

  it("walks a parsed JSON text only when it holds an escape that can make unstorable text", () => {
    const of = (text: string) => unstorableJson(text, JSON.parse(text));
    expect(of('{"a":"\\\\u0000","b":"\\ud83d\\ude00"}')).to.equal(undefined);
    expect(of('{"a":["x","\\u0000"]}')).to.equal("a[1]: contains a NUL character");
    expect(of('{"a":"\\uDC00"}')).to.equal("a: contains a lone surrogate (not valid Unicode)");
  });

  it("escapes NULs and lone surrogates, and only those, for text PostgreSQL must store", () => {
    expect(escapeUnstorable("a\u0000b\ud800c\udfffd \ud83d\ude00")).to.equal(
      "a\\u0000b\\ud800c\\udfffd \ud83d\ude00",
    );
  });

  it("applies the same rules to broker messages as POST /events", () => {
    const refused = (bytes: Buffer) => {
      try {
        parseEventMessage(bytes);
      } catch (err) {
        return (err as Error).message;
      }
      return "parsed";
    };
    expect(refused(Buffer.from('{"type":"A\\u0000B"}'))).to.equal("type: contains a NUL character");
    expect(refused(Buffer.from('{"type":"t","type":"u"}'))).to.equal('duplicate key "type" in the JSON body');
    expect(refused(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]))).to.equal("the message is not valid UTF-8");
    expect(refused(Buffer.from(`\ufeff{"type":"t"}`))).to.match(/^not JSON: /);
    expect(refused(Buffer.from(deep(10_000, "1")))).to.equal("parsed");
  });
});
