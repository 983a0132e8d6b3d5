import { expect } from "chai";
import { CacheKeyMemo, cacheKey } from "../../ratelimit/limiter/cache-key.js";

// Counter keys, built anew or taken from a limit's memo of its last one.
describe("ratelimit counter keys", () => {
  const descriptor = (...entries: [string, string][]) => ({
    entries: entries.map(([key, value]) => ({ key, value })),
    limit: undefined,
    hitsAddend: undefined,
  });
  const HOUR = 3600;

  it("a memo gives the key built from the same prefix, domain, entries and window, and no other", () => {
    const memo = new CacheKeyMemo();
    const at = (prefix: string, domain: string, d: ReturnType<typeof descriptor>, now: number) => {
      const key = cacheKey(prefix, domain, d, undefined, "HOUR", now, memo);
      expect(key).to.equal(cacheKey(prefix, domain, d, undefined, "HOUR", now));
      return key;
    };
    const t = 10 * HOUR + 5;
    const first = at("p:", "d", descriptor(["k", "a"]), t);
    expect(first).to.equal(`p:d_k_a_${10 * HOUR}`);
    expect(at("p:", "d", descriptor(["k", "a"]), t + 100)).to.equal(first);
    expect(at("p:", "d", descriptor(["k", "b"]), t)).to.equal(`p:d_k_b_${10 * HOUR}`);
    expect(at("p:", "d", descriptor(["k", "a"]), t + HOUR)).to.equal(`p:d_k_a_${11 * HOUR}`);
    expect(at("q:", "d", descriptor(["k", "a"]), t)).to.equal(`q:d_k_a_${10 * HOUR}`);
    expect(at("p:", "e", descriptor(["k", "a"]), t)).to.equal(`p:e_k_a_${10 * HOUR}`);
    expect(at("p:", "d", descriptor(["k", "a"], ["j", "b"]), t)).to.equal(`p:d_k_a_j_b_${10 * HOUR}`);
    expect(at("p:", "d", descriptor(["j", "a"]), t)).to.equal(`p:d_j_a_${10 * HOUR}`);
  });

  it("a shared wildcard puts its pattern in place of the value", () => {
    const key = cacheKey(
      "",
      "d",
      descriptor(["path", "/api/x"], ["m", "GET"]),
      ["/api/*", undefined],
      "HOUR",
      0,
    );
    expect(key).to.equal("d_path_/api/*_m_GET_0");
  });
});
