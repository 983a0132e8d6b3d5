// Settings of the Redis topologies: KVSTORE_URL read per KVSTORE_TYPE (and the
// per-second twin per KVSTORE_PERSECOND_TYPE), with clear errors and exit code 2.

import { expect } from "chai";
import { loadSettings, SettingsError } from "../../ratelimit/settings/environment.js";
import { runCommand } from "../support/process.js";

const problems = (env: Record<string, string>): string => {
  try {
    loadSettings(env);
  } catch (err) {
    if (err instanceof SettingsError) return err.problems.join("\n");
    throw err;
  }
  return "";
};

describe("ratelimit Redis topology settings", () => {
  it("KVSTORE_TYPE=sentinel reads <master name>,<sentinel host:port>,...", () => {
    const s = loadSettings({
      KVSTORE_TYPE: "sentinel",
      KVSTORE_URL: "mymaster, 10.0.0.1:26379,[::1]:26380",
      KVSTORE_SENTINEL_AUTH: "user:pw",
    });
    expect(s.kvstore.address).to.deep.equal({
      type: "sentinel",
      masterName: "mymaster",
      sentinels: [
        { host: "10.0.0.1", port: 26379 },
        { host: "::1", port: 26380 },
      ],
    });
    expect(s.kvstore.sentinelAuth).to.equal("user:pw");
  });

  it("KVSTORE_TYPE=cluster reads the nodes' host:port list", () => {
    const s = loadSettings({ KVSTORE_TYPE: "cluster", KVSTORE_URL: "127.0.0.1:7000,127.0.0.1:7001" });
    expect(s.kvstore.address).to.deep.equal({
      type: "cluster",
      nodes: [
        { host: "127.0.0.1", port: 7000 },
        { host: "127.0.0.1", port: 7001 },
      ],
    });
  });

  it("names the variable and the expected form when KVSTORE_URL does not fit KVSTORE_TYPE", () => {
    expect(problems({ KVSTORE_TYPE: "sentinel", KVSTORE_URL: "127.0.0.1:26379" })).to.include(
      'KVSTORE_URL="127.0.0.1:26379": malformed for KVSTORE_TYPE=sentinel, expected <master name>,<sentinel host:port>',
    );
    expect(problems({ KVSTORE_TYPE: "sentinel", KVSTORE_URL: "127.0.0.1:1,127.0.0.1:2" })).to.include(
      "the first item is the master's name, not an address",
    );
    expect(problems({ KVSTORE_TYPE: "sentinel", KVSTORE_URL: "m,sentinel-a" })).to.include(
      '"sentinel-a" is not host:port',
    );
    expect(problems({ KVSTORE_TYPE: "cluster", KVSTORE_URL: "127.0.0.1:7000,nope" })).to.include(
      'KVSTORE_URL="127.0.0.1:7000,nope": malformed for KVSTORE_TYPE=cluster, expected comma-separated host:port',
    );
    expect(problems({ KVSTORE_TYPE: "ring", KVSTORE_URL: "127.0.0.1:7000" })).to.include(
      'KVSTORE_TYPE="ring": expected one of single, sentinel, cluster',
    );
    expect(
      problems({
        KVSTORE_URL: "127.0.0.1:6379",
        KVSTORE_PERSECOND: "true",
        KVSTORE_PERSECOND_TYPE: "cluster",
        KVSTORE_PERSECOND_URL: "a,b",
      }),
    ).to.include('KVSTORE_PERSECOND_URL="a,b": malformed for KVSTORE_PERSECOND_TYPE=cluster');
  });

  it("the per-second store has its own twin of every setting", () => {
    const s = loadSettings({
      KVSTORE_URL: "127.0.0.1:6379",
      KVSTORE_PERSECOND: "true",
      KVSTORE_PERSECOND_TYPE: "sentinel",
      KVSTORE_PERSECOND_URL: "m,127.0.0.1:26379",
      KVSTORE_PERSECOND_SENTINEL_AUTH: "pw",
      KVSTORE_PERSECOND_POOL_SIZE: "3",
      KVSTORE_PERSECOND_PIPELINE_WINDOW: "150us",
      KVSTORE_PERSECOND_TLS_SKIP_HOSTNAME_VERIFICATION: "true",
      KVSTORE_PERSECOND_HEALTH_CHECK_ACTIVE_CONNECTION: "true",
    });
    expect(s.kvstorePerSecondSettings).to.deep.include({
      type: "sentinel",
      sentinelAuth: "pw",
      poolSize: 3,
      pipelineWindowMs: 0.15,
      tlsSkipHostnameVerification: true,
      healthCheckActiveConnection: true,
    });
    expect(s.kvstore.tlsSkipHostnameVerification).to.equal(false);
  });

  it("the command exits 2 naming KVSTORE_URL when it is malformed for the type", async () => {
    const out = await runCommand("ratelimit", [], {
      KVSTORE_TYPE: "sentinel",
      KVSTORE_URL: "127.0.0.1:26379",
    });
    expect(out.code).to.equal(2);
    expect(out.stderr).to.include("KVSTORE_URL");
    expect(out.stderr).to.include("malformed for KVSTORE_TYPE=sentinel");
  });
});
