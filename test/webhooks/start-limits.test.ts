import { expect } from "chai";
import {
  checkEventBounds,
  KEYWORD_MAX_CHARS,
  keyword,
  MAX_EVENT_BYTES,
  nestingDepth,
  SUMMARY_MAX_BYTES,
  summary,
} from "../../core/start-limits.js";

const event = (payload: unknown) => ({
  idempotency_key: "k",
  date: "",
  app: "ledger",
  version: "v2",
  type: "ledger.committed_transactions",
  payload,
});

describe("what a delivery's workflow start carries (core/start-limits.ts)", () => {
  it("keeps keyword values of up to 255 characters and cuts longer ones on a character", () => {
    expect(keyword("ledger.committed")).to.equal("ledger.committed");
    expect(keyword("x".repeat(KEYWORD_MAX_CHARS))).to.equal("x".repeat(255));
    const cut = keyword("€".repeat(300));
    expect(Array.from(cut)).to.have.length(255);
    expect(cut).to.equal(`${"€".repeat(254)}…`);
    const emoji = keyword("😀".repeat(300)); // two UTF-16 units each, one character
    expect(Array.from(emoji)).to.have.length(255);
  });

  it("keeps summaries within 200 bytes of UTF-8 without splitting a character", () => {
    expect(summary("ledger.x → example.com")).to.equal("ledger.x → example.com");
    const cut = summary(`${"é".repeat(150)} → host`);
    expect(Buffer.byteLength(cut)).to.be.at.most(SUMMARY_MAX_BYTES);
    expect(cut).to.equal(`${"é".repeat(98)}…`);
  });

  it("measures nesting without recursion, 10 000 levels included", () => {
    expect(nestingDepth(1)).to.equal(0);
    expect(nestingDepth({ a: [1, { b: 2 }] })).to.equal(3);
    let deep: unknown = 1;
    for (let i = 0; i < 10_000; i++) deep = { a: deep };
    expect(nestingDepth(deep)).to.equal(10_000);
  });

  it("refuses events over the depth or size bound, naming it", () => {
    let deep: unknown = 1;
    for (let i = 0; i < 129; i++) deep = [deep];
    expect(() => checkEventBounds(event(deep))).to.throw(
      "the event's payload nests 129 levels deep; deliveries take at most 128 (MAX_EVENT_DEPTH)",
    );
    let ok: unknown = 1;
    for (let i = 0; i < 128; i++) ok = [ok];
    expect(() => checkEventBounds(event(ok))).not.to.throw();
    expect(() => checkEventBounds(event("x".repeat(MAX_EVENT_BYTES)))).to.throw(
      /deliveries take at most 2097152 \(MAX_EVENT_BYTES, 2 MiB\)$/,
    );
    expect(() => checkEventBounds(event("x".repeat(MAX_EVENT_BYTES - 200)))).not.to.throw();
  });
});
