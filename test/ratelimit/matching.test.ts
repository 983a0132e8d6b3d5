// Matching and evaluation rules, black-box over gRPC against a service on real
// Redis: depth, most specific first, whitelisting, wildcards anywhere in a value,
// share_threshold, replaces, unlimited, detailed_metric, value_to_metric, and the
// stats keys each choice produces.

import { expect } from "chai";
import {
  RateLimitResponse_Code as Code,
  RateLimitResponse_RateLimit_Unit as Unit,
} from "../../proto/gen/envoy/service/ratelimit/v3/rls.js";
import { clearOfWindowEdge, RateLimitProcess, RuntimeDir, uniq } from "./harness.js";

const BASIC = `domain: test-domain
descriptors:
  - key: key1
    value: value1
    descriptors:
      - {key: subkey1, rate_limit: {unit: hour, requests_per_unit: 5}}
      - {key: subkey1, value: subvalue1, rate_limit: {unit: hour, requests_per_unit: 10}}
  - {key: key2, rate_limit: {unit: minute, requests_per_unit: 20}}
  - {key: key2, value: value2, rate_limit: {unit: minute, requests_per_unit: 30}}
  - {key: key2, value: value3}
  - key: key5
    value: value5
    rate_limit: {unit: day, requests_per_unit: 15}
    descriptors:
      - {key: subkey5, value: subvalue5, rate_limit: {unit: day, requests_per_unit: 25}}
  - {key: key6, rate_limit: {unlimited: true}}
  - {key: key7, detailed_metric: true, rate_limit: {unit: minute, requests_per_unit: 70}}
  - {key: vm, value_to_metric: true, rate_limit: {unit: hour, requests_per_unit: 7}}
  - {key: ip, detailed_metric: true, rate_limit: {unit: hour, requests_per_unit: 7}}
  - key: vmouter
    value_to_metric: true
    descriptors:
      - {key: inner, rate_limit: {unit: hour, requests_per_unit: 8}}
`;

const WILDCARDS = `domain: wild
descriptors:
  - {key: wild, value: "foo*", rate_limit: {unit: hour, requests_per_unit: 3}}
  - {key: noWild, value: foo, rate_limit: {unit: hour, requests_per_unit: 4}}
  - {key: midWild, value: "bar*b", rate_limit: {unit: hour, requests_per_unit: 5}}
  - {key: multiWild, value: "foo*bar*baz", rate_limit: {unit: hour, requests_per_unit: 6}}
  - {key: files, value: "files/*", share_threshold: true, rate_limit: {unit: hour, requests_per_unit: 10}}
  - {key: files_no_share, value: "files_no_share/*", rate_limit: {unit: hour, requests_per_unit: 10}}
  - {key: file, value: test1, rate_limit: {unit: minute, requests_per_unit: 50}}
  - {key: file, value: "test*", share_threshold: true, rate_limit: {unit: minute, requests_per_unit: 100}}
  - {key: shared_vm, value: "pre*", share_threshold: true, value_to_metric: true, rate_limit: {unit: hour, requests_per_unit: 9}}
  - {key: shared_dm, value: "dm*", share_threshold: true, detailed_metric: true, rate_limit: {unit: hour, requests_per_unit: 9}}
  - key: outer
    value: "o*"
    share_threshold: true
    descriptors:
      - {key: inner, detailed_metric: true, rate_limit: {unit: hour, requests_per_unit: 9}}
  - {key: any, value: "*", rate_limit: {unit: hour, requests_per_unit: 11}}
`;

const REPLACES = `domain: replaces
descriptors:
  - key: foo
    descriptors:
      - {key: bar, value: banned, rate_limit: {name: banned_limit, unit: minute, requests_per_unit: 0}}
  - key: source_cluster
    value: proxy
    descriptors:
      - key: destination_cluster
        value: override
        rate_limit: {unit: hour, requests_per_unit: 2, replaces: [{name: banned_limit}]}
  - {key: category, value: account, rate_limit: {unit: hour, requests_per_unit: 4, replaces: [{name: bkthomps}, {name: fake_name}]}}
  - {key: user, value: bkthomps, rate_limit: {name: bkthomps, unit: hour, requests_per_unit: 1}}
`;

describe("ratelimit matching (gRPC, Redis)", function () {
  this.timeout(60_000);
  let runtime: RuntimeDir;
  let svc: RateLimitProcess;

  before(async () => {
    runtime = new RuntimeDir({ "basic.yaml": BASIC, "wildcards.yaml": WILDCARDS, "replaces.yaml": REPLACES });
    svc = await RateLimitProcess.start({ runtime });
  });
  after(async () => {
    await svc?.stop();
    runtime?.cleanup();
  });

  const only = async (domain: string, entries: [string, string][]) =>
    (await svc.call(domain, [entries])).statuses[0]!;

  it("a nested default key applies at its depth with the parent's value in the stats key", async () => {
    const s = await only("test-domain", [
      ["key1", "value1"],
      ["subkey1", `x${uniq()}`],
    ]);
    expect(s.code).to.equal(Code.OK);
    expect(s.currentLimit).to.deep.include({ requestsPerUnit: 5, unit: Unit.HOUR });
    expect(s.limitRemaining).to.equal(4);
    expect(
      await svc.stat("ratelimit.service.rate_limit.test-domain.key1_value1.subkey1.total_hits"),
    ).to.be.at.least(1);
  });

  it("an exact value beats the key-only entry at the same level", async () => {
    const s = await only("test-domain", [
      ["key1", "value1"],
      ["subkey1", "subvalue1"],
    ]);
    expect(s.currentLimit?.requestsPerUnit).to.equal(10);
    expect(
      await svc.stat("ratelimit.service.rate_limit.test-domain.key1_value1.subkey1_subvalue1.total_hits"),
    ).to.be.at.least(1);
    expect((await only("test-domain", [["key2", "value2"]])).currentLimit?.requestsPerUnit).to.equal(30);
    const any = await only("test-domain", [["key2", `any${uniq()}`]]);
    expect(any.currentLimit?.requestsPerUnit).to.equal(20);
    expect(await svc.stat("ratelimit.service.rate_limit.test-domain.key2.total_hits")).to.be.at.least(1);
  });

  it("a key without value counts each distinct value separately", async () => {
    await clearOfWindowEdge(60);
    const a = `a${uniq()}`;
    const b = `b${uniq()}`;
    await only("test-domain", [["key2", a]]);
    expect((await only("test-domain", [["key2", a]])).limitRemaining).to.equal(18);
    expect((await only("test-domain", [["key2", b]])).limitRemaining).to.equal(19);
  });

  it("an entry without rate_limit and without children whitelists the value", async () => {
    const s = await only("test-domain", [["key2", "value3"]]);
    expect(s).to.deep.include({ code: Code.OK, currentLimit: undefined, limitRemaining: 0 });
  });

  it("a parent without rate_limit gives no limit to a shorter descriptor", async () => {
    const s = await only("test-domain", [["key1", "value1"]]);
    expect(s.currentLimit).to.equal(undefined);
  });

  it("matches only at the same depth: a deeper request does not inherit the parent's limit", async () => {
    const s = await only("test-domain", [
      ["key5", "value5"],
      ["subkey5", "subvalue"],
    ]);
    expect(s.currentLimit).to.equal(undefined);
    const deep = await only("test-domain", [
      ["key2", "value2"],
      ["extra", "x"],
    ]);
    expect(deep.currentLimit).to.equal(undefined);
  });

  it("unlimited answers OK with the largest uint32 remaining and no current limit", async () => {
    const s = await only("test-domain", [["key6", "foo"]]);
    expect(s).to.deep.include({ code: Code.OK, limitRemaining: 4294967295, currentLimit: undefined });
    expect(await svc.stat("ratelimit.service.rate_limit.test-domain.key6.total_hits")).to.equal(0);
  });

  it("detailed_metric puts the runtime value into the stats key", async () => {
    await only("test-domain", [["key7", "unspecified_value"]]);
    expect(
      await svc.stat("ratelimit.service.rate_limit.test-domain.key7_unspecified_value.total_hits"),
    ).to.be.at.least(1);
  });

  it("value_to_metric puts the runtime value of that level into the stats key", async () => {
    await only("test-domain", [["vm", "v1"]]);
    expect(await svc.stat("ratelimit.service.rate_limit.test-domain.vm_v1.total_hits")).to.equal(1);
    await only("test-domain", [
      ["vmouter", "o1"],
      ["inner", "i1"],
    ]);
    expect(await svc.stat("ratelimit.service.rate_limit.test-domain.vmouter_o1.inner.total_hits")).to.equal(
      1,
    );
  });

  it("stat names replace : and | and the dots of IPv4 addresses with _", async () => {
    await only("test-domain", [["ip", "10.0.0.1"]]);
    await only("test-domain", [["ip", "a:b|c"]]);
    const stats = await svc.stats();
    expect(stats.get("ratelimit.service.rate_limit.test-domain.ip_10_0_0_1.total_hits")).to.equal(1);
    expect(stats.get("ratelimit.service.rate_limit.test-domain.ip_a_b_c.total_hits")).to.equal(1);
  });

  it("an unknown domain gives no limit and counts domain_not_found", async () => {
    const s = await only("foo_domain", [["key1", "x"]]);
    expect(s).to.deep.include({ code: Code.OK, currentLimit: undefined });
    expect(await svc.stat("ratelimit.service.rate_limit.foo_domain.domain_not_found")).to.equal(1);
  });

  it("a trailing wildcard matches values with the prefix; each value has its own counter, one stats key", async () => {
    const v1 = `foo${uniq()}`;
    await only("wild", [["wild", v1]]);
    const s1 = await only("wild", [["wild", v1]]);
    const s2 = await only("wild", [["wild", `foo${uniq()}`]]);
    expect([s1.limitRemaining, s2.limitRemaining]).to.deep.equal([1, 2]);
    expect(await svc.stat("ratelimit.service.rate_limit.wild.wild_foo*.total_hits")).to.equal(3);
    expect((await only("wild", [["wild", "bar"]])).currentLimit).to.equal(undefined);
    expect((await only("wild", [["noWild", "foo1"]])).currentLimit).to.equal(undefined);
    expect((await only("wild", [["noWild", "foo"]])).currentLimit?.requestsPerUnit).to.equal(4);
  });

  it("wildcards work in the middle and several times in a value", async () => {
    const limit = async (k: string, v: string) =>
      (await only("wild", [[k, v]])).currentLimit?.requestsPerUnit;
    for (const v of ["barb", "barab", "bar123b"]) expect(await limit("midWild", v), v).to.equal(5);
    for (const v of ["bara", "xbarb"]) expect(await limit("midWild", v), v).to.equal(undefined);
    for (const v of ["foobarbaz", "foo123bar456baz"]) expect(await limit("multiWild", v), v).to.equal(6);
    for (const v of ["foo123baz", "bar456baz"]) expect(await limit("multiWild", v), v).to.equal(undefined);
    expect(await limit("any", "")).to.equal(11);
  });

  it("share_threshold makes all matching values share one counter and the pattern's stats key", async () => {
    for (let i = 0; i < 10; i++) {
      const s = await only("wild", [["files", `files/${uniq()}.pdf`]]);
      expect(s.code).to.equal(Code.OK);
    }
    const s = await only("wild", [["files", "files/b.csv"]]);
    expect(s).to.deep.include({ code: Code.OVER_LIMIT, limitRemaining: 0 });
    expect(s.currentLimit).to.deep.include({ requestsPerUnit: 10, unit: Unit.HOUR });
    expect(await svc.stat("ratelimit.service.rate_limit.wild.files_files/*.total_hits")).to.equal(11);
    for (let i = 0; i < 10; i++) {
      expect((await only("wild", [["files_no_share", `files_no_share/${uniq()}`]])).limitRemaining).to.equal(
        9,
      );
    }
  });

  it("an exact value beats a shared wildcard; share_threshold keeps the whole pattern in the stat name", async () => {
    expect((await only("wild", [["file", "test1"]])).currentLimit?.requestsPerUnit).to.equal(50);
    expect((await only("wild", [["file", "test2"]])).currentLimit?.requestsPerUnit).to.equal(100);
    // With value_to_metric and with detailed_metric alike, as the reference names them.
    await only("wild", [["shared_vm", "pre-a"]]);
    await only("wild", [["shared_vm", "pre-b"]]);
    expect(await svc.stat("ratelimit.service.rate_limit.wild.shared_vm_pre*.total_hits")).to.equal(2);
    await only("wild", [["shared_dm", "dm-a"]]);
    await only("wild", [["shared_dm", "dm-b"]]);
    expect(await svc.stat("ratelimit.service.rate_limit.wild.shared_dm_dm*.total_hits")).to.equal(2);
  });

  it("detailed_metric names an empty value <key>_, but <key> beside a shared wildcard (as the reference)", async () => {
    await only("test-domain", [["key7", ""]]);
    expect(await svc.stat("ratelimit.service.rate_limit.test-domain.key7_.total_hits")).to.equal(1);
    await only("wild", [
      ["outer", "o-1"],
      ["inner", ""],
    ]);
    await only("wild", [
      ["outer", "o-2"],
      ["inner", "x"],
    ]);
    const stats = await svc.stats();
    expect(stats.get("ratelimit.service.rate_limit.wild.outer_o*.inner.total_hits")).to.equal(1);
    expect(stats.get("ratelimit.service.rate_limit.wild.outer_o*.inner_x.total_hits")).to.equal(1);
  });

  it("replaces drops the named rule for that request and leaves its counter alone", async () => {
    const banned: [string, string][] = [
      ["foo", uniq()],
      ["bar", "banned"],
    ];
    const override: [string, string][] = [
      ["source_cluster", "proxy"],
      ["destination_cluster", "override"],
    ];
    expect((await svc.call("replaces", [banned])).overallCode).to.equal(Code.OVER_LIMIT);
    const hitsBefore = await svc.stat("ratelimit.service.rate_limit.replaces.foo.bar_banned.total_hits");
    const codes: Code[] = [];
    for (let i = 0; i < 3; i++) codes.push((await svc.call("replaces", [banned, override])).overallCode);
    expect(codes).to.deep.equal([Code.OK, Code.OK, Code.OVER_LIMIT]);
    const r = await svc.call("replaces", [banned, override]);
    expect(r.statuses[0]).to.deep.include({ code: Code.OK, currentLimit: undefined });
    expect(await svc.stat("ratelimit.service.rate_limit.replaces.foo.bar_banned.total_hits")).to.equal(
      hitsBefore,
    );
  });

  it("one rule can replace several names", async () => {
    const codes: Code[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await svc.call("replaces", [[["category", "account"]], [["user", "bkthomps"]]]);
      codes.push(r.overallCode);
    }
    expect(codes).to.deep.equal([Code.OK, Code.OK, Code.OK, Code.OK, Code.OVER_LIMIT]);
  });
});
