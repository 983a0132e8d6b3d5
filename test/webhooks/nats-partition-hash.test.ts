import { expect } from "chai";
import { partitionKey, partitionOf, partitionOfKey } from "../../core/broker/partitions.js";

const msg = (m: unknown) => new TextEncoder().encode(typeof m === "string" ? m : JSON.stringify(m));

describe("NATS partitions: the hash of (tenant, ordering key)", () => {
  it("is the same in every process and every release (fixed values)", () => {
    // A change here moves keys between partitions: processes of two releases side by side
    // would then hand one key's events over at once. Keep these values.
    expect(partitionKey(msg({ type: "a", ordering_key: "order-1" }))).to.equal('[null,"order-1"]');
    expect(partitionKey(msg({ type: "a", tenant: " acme ", ordering_key: "k" }))).to.equal('["acme","k"]');
    expect(partitionKey(msg({ type: "a", tenant: "acme" }))).to.equal('["acme",null]');
    expect(partitionKey(msg("not json"))).to.equal("[null,null]");
    expect(partitionKey(msg([1, 2]))).to.equal("[null,null]");
    expect(partitionKey(msg({ type: "a", ordering_key: 7, tenant: "" }))).to.equal("[null,null]");
    expect(
      ['[null,"order-1"]', '["acme","k"]', '["acme",null]', "[null,null]"].map((k) => partitionOfKey(k, 6)),
    ).to.deep.equal([4, 2, 1, 1]);
    expect(partitionOfKey('[null,"order-1"]', 64)).to.equal(52);
  });

  it("depends on the tenant and the key only, not on the rest of the event", () => {
    const a = partitionOf(msg({ type: "x.a", payload: { n: 1 }, ordering_key: "k-9", tenant: "t" }), 6);
    const b = partitionOf(msg({ idempotency_key: "z", type: "y.b", ordering_key: "k-9", tenant: "t " }), 6);
    expect(a).to.equal(b);
    // Events without a key: the tenant's whole stream is one key, so one partition.
    const p = new Set(
      Array.from({ length: 50 }, (_, i) => partitionOf(msg({ type: `t${i}`, tenant: "t" }), 6)),
    );
    expect(p.size).to.equal(1);
    expect(partitionOf(msg({ type: "a", ordering_key: "k" }), 1)).to.equal(0);
  });

  it("spreads keys evenly", () => {
    for (const count of [2, 6, 16]) {
      const per = new Array<number>(count).fill(0);
      const keys = 12_000;
      for (let i = 0; i < keys; i++)
        per[partitionOf(msg({ type: "a", tenant: `t${i % 7}`, ordering_key: `key-${i}` }), count)]! += 1;
      const mean = keys / count;
      // A binomial's standard deviation is at most 3.5 % of the mean here (16 partitions): 15 %
      // is 4.3 of them (the values are fixed, so this is about the hash, not chance).
      for (const n of per) expect(Math.abs(n - mean) / mean, `${count}: ${per.join(",")}`).to.be.below(0.15);
    }
  });
});
