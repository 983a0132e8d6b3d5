// Rule files: every validation error of the reference, with its text, and the
// accepted forms (units in any case, all seven units, unlimited, wildcards).

import { expect } from "chai";
import { fromRoot } from "../../common/paths.js";
import { readConfigFiles } from "../../ratelimit/config/file-provider.js";
import { buildConfig, dumpConfig } from "../../ratelimit/config/rules.js";

const load = (text: string, name = "test.yaml", merge = false) => buildConfig([{ name, text }], merge);
const fails = (text: string, message: string, name = "test.yaml") => {
  expect(() => load(text, name)).to.throw(message);
};

describe("ratelimit rules: validation errors", () => {
  it("reports malformed YAML with the file name", () => {
    expect(() => load("'''\n", "bad_yaml.yaml")).to.throw(/^bad_yaml\.yaml: error loading config file: /);
  });

  it("rejects an unknown key at the top level and inside a rate_limit", () => {
    fails(
      "domain: d\nratelimit: {}\n",
      "misspelled_key.yaml: config error, unknown key 'ratelimit'",
      "misspelled_key.yaml",
    );
    fails(
      "domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: second, requestsperunit: 5}\n",
      "misspelled_key2.yaml: config error, unknown key 'requestsperunit'",
      "misspelled_key2.yaml",
    );
  });

  it("rejects a key that is not a string", () => {
    fails(
      "0.25: test-domain\n",
      "non_string_key.yaml: config error, key is not of type string: 0.25",
      "non_string_key.yaml",
    );
  });

  it("rejects list items that are not maps", () => {
    fails(
      "domain: d\ndescriptors: [a, b, c]\n",
      "non_map_list.yaml: config error, yaml file contains list of type other than map: a",
      "non_map_list.yaml",
    );
  });

  it("rejects an empty or missing domain", () => {
    fails(
      "descriptors: []\n",
      "empty_domain.yaml: config file cannot have empty domain",
      "empty_domain.yaml",
    );
    fails("domain: ''\n", "config file cannot have empty domain");
    fails("", "config file cannot have empty domain");
  });

  it("rejects the same domain in two files unless merging", () => {
    const files = [
      {
        name: "a.yaml",
        text: "domain: test-domain\ndescriptors: [{key: a, rate_limit: {unit: second, requests_per_unit: 1}}]\n",
      },
      { name: "duplicate_domain.yaml", text: "domain: test-domain\ndescriptors: [{key: b}]\n" },
    ];
    expect(() => buildConfig(files, false)).to.throw(
      "duplicate_domain.yaml: duplicate domain 'test-domain' in config file",
    );
    const merged = buildConfig(files, true);
    expect([...merged.domains.get("test-domain")!.level.byKey.keys()]).to.deep.equal(["a", "b"]);
  });

  it("rejects a descriptor without key", () => {
    fails(
      "domain: d\ndescriptors: [{value: v}]\n",
      "empty_key.yaml: descriptor has empty key",
      "empty_key.yaml",
    );
  });

  it("rejects a duplicate composite key, at one level, nested, and across merged files", () => {
    fails(
      "domain: test-domain\ndescriptors:\n  - {key: key1, value: value1}\n  - {key: key1, value: value1}\n",
      "duplicate_key.yaml: duplicate descriptor composite key 'test-domain.key1_value1'",
      "duplicate_key.yaml",
    );
    fails(
      "domain: d\ndescriptors:\n  - key: a\n    descriptors: [{key: b}, {key: b}]\n",
      "duplicate descriptor composite key 'd.a.b'",
    );
    // `{key: a_b}` and `{key: a, value: b}` collide, as in the reference.
    fails(
      "domain: d\ndescriptors: [{key: a_b}, {key: a, value: b}]\n",
      "duplicate descriptor composite key 'd.a_b'",
    );
    const files = [
      { name: "one.yaml", text: "domain: d\ndescriptors: [{key: k, value: v}]\n" },
      { name: "two.yaml", text: "domain: d\ndescriptors: [{key: k, value: v}]\n" },
    ];
    expect(() => buildConfig(files, true)).to.throw("two.yaml: duplicate descriptor composite key 'd.k_v'");
  });

  it("rejects an invalid or missing unit", () => {
    fails(
      "domain: d\ndescriptors: [{key: k, rate_limit: {unit: foo, requests_per_unit: 1}}]\n",
      "bad_limit_unit.yaml: invalid rate limit unit 'foo'",
      "bad_limit_unit.yaml",
    );
    fails(
      "domain: d\ndescriptors: [{key: k, rate_limit: {requests_per_unit: 1}}]\n",
      "invalid rate limit unit ''",
    );
  });

  it("rejects a unit together with unlimited", () => {
    fails(
      "domain: d\ndescriptors: [{key: k, rate_limit: {unlimited: true, unit: day}}]\n",
      "unlimited_with_unit.yaml: should not specify rate limit unit when unlimited",
      "unlimited_with_unit.yaml",
    );
  });

  it("rejects replaces naming the rule itself or empty", () => {
    fails(
      "domain: d\ndescriptors: [{key: k, rate_limit: {name: self, unit: day, requests_per_unit: 1, replaces: [{name: self}]}}]\n",
      "replaces_self.yaml: replaces should not contain name of same descriptor",
      "replaces_self.yaml",
    );
    fails(
      "domain: d\ndescriptors: [{key: k, rate_limit: {unit: day, requests_per_unit: 1, replaces: [{name: }]}}]\n",
      "replaces_empty.yaml: should not have an empty replaces entry",
      "replaces_empty.yaml",
    );
  });

  it("rejects share_threshold on a value without *", () => {
    fails(
      "domain: d\ndescriptors: [{key: files, value: plain, share_threshold: true, rate_limit: {unit: hour, requests_per_unit: 1}}]\n",
      "test.yaml: share_threshold can only be used with wildcard values (containing '*'), but found key 'files_plain'",
    );
    fails(
      "domain: d\ndescriptors: [{key: files, share_threshold: true}]\n",
      "share_threshold can only be used with wildcard values (containing '*'), but found key 'files'",
    );
  });

  it("rejects negative, fractional, too large and quoted requests_per_unit, and non-boolean flags", () => {
    const rpu = (v: string) =>
      `domain: d\ndescriptors: [{key: k, rate_limit: {unit: day, requests_per_unit: ${v}}}]\n`;
    fails(rpu("-1"), "cannot unmarshal `-1` into uint32");
    fails(rpu("4294967296"), "cannot unmarshal `4294967296` into uint32");
    fails(rpu('"5"'), 'cannot unmarshal `"5"` into uint32');
    fails(rpu("1.5"), "test.yaml: error checking config");
    fails("domain: d\ndescriptors: [{key: k, shadow_mode: maybe}]\n", 'cannot unmarshal `"maybe"` into bool');
  });
});

describe("ratelimit rules: accepted forms", () => {
  it("accepts every unit in any case, 0 requests, unlimited and metadata", () => {
    const config = load(`domain: d
descriptors:
  - {key: a, rate_limit: {unit: Second, requests_per_unit: 1}}
  - {key: b, rate_limit: {unit: MINUTE, requests_per_unit: 0}}
  - {key: c, rate_limit: {unit: hour, requests_per_unit: 4294967295}}
  - {key: d, rate_limit: {unit: day, requests_per_unit: 1}}
  - {key: e, rate_limit: {unit: week, requests_per_unit: 1}}
  - {key: f, rate_limit: {unit: month, requests_per_unit: 1}}
  - {key: g, rate_limit: {unit: year, requests_per_unit: 1}}
  - {key: h, rate_limit: {unlimited: true}}
  - {key: i, metadata: {anything: [1, 2.5, {x: y}]}, rate_limit: {unit: day, requests_per_unit: 1}}
`);
    const units = [...config.domains.get("d")!.level.byKey.values()].map((n) => n.limit?.unit ?? "unlimited");
    expect(units).to.deep.equal([
      "SECOND",
      "MINUTE",
      "HOUR",
      "DAY",
      "WEEK",
      "MONTH",
      "YEAR",
      "unlimited",
      "DAY",
    ]);
    expect(config.domains.get("d")!.level.byKey.get("c")!.limit!.requestsPerUnit).to.equal(4294967295);
  });

  it("dumps one line per rule", () => {
    const config = load(
      "domain: d\ndescriptors: [{key: k, value: v, shadow_mode: true, rate_limit: {unit: day, requests_per_unit: 3}}]\n",
    );
    expect(dumpConfig(config)).to.equal(
      "d.k_v: unit=DAY requests_per_unit=3, shadow_mode: true, quota_mode: false\n",
    );
  });

  it("reads only the first YAML document and lets a repeated map key win last", () => {
    const config = load("domain: d\ndomain: e\ndescriptors: []\n---\ndomain: x\n");
    expect([...config.domains.keys()]).to.deep.equal(["e"]);
  });
});

describe("ratelimit example rules", () => {
  it("ratelimit/examples/config loads", async () => {
    const files = await readConfigFiles({
      runtimeRoot: fromRoot("ratelimit", "examples"),
      runtimeSubdirectory: "",
      runtimeAppDirectory: "config",
      runtimeIgnoreDotFiles: false,
      runtimeWatchRoot: true,
      mergeDomainConfig: false,
    });
    expect(files.map((f) => f.name)).to.deep.equal(["config.example.yaml"]);
    const config = buildConfig(files, false);
    expect(dumpConfig(config)).to.include("example.path_/api/*: unit=MINUTE requests_per_unit=100");
  });
});
