import { expect } from "chai";
import { VERSION } from "../../common/version.js";
import { freePort } from "../support/ports.js";
import { createTestDatabase, type TestDatabase } from "../support/postgres.js";
import { runCommand } from "../support/process.js";
import { testTemporal } from "../support/temporal.js";
import { startWebhooks, type WebhooksUnderTest } from "../support/webhooks-server.js";

describe("webhooks command", () => {
  it("prints the package version", async () => {
    const r = await runCommand("webhooks", ["version"]);
    expect(r.code).to.equal(0);
    expect(r.stdout.trim()).to.equal(VERSION);
  });

  it("documents every flag of the spec with its default in --help", async () => {
    const r = await runCommand("webhooks", ["serve", "--help"]);
    expect(r.code).to.equal(0);
    const help = r.stdout.replace(/\s+/g, " ");
    for (const [flag, def] of [
      ["--listen", ":8080"],
      ["--retry-period", "3s"],
      ["--retry-batch-size", "50"],
      ["--min-backoff-delay", "1m"],
      ["--max-backoff-delay", "1h"],
      ["--abort-after", "10h"],
      ["--max-attempts", "15"],
      ["--retention-period", "1h"],
      ["--retention-success-delay", "720h"],
      ["--retention-failed-delay", "2160h"],
      ["--broker-topics", "default"],
    ]) {
      expect(help).to.match(new RegExp(`${flag} <\\w+> ((?!--).)*\\(default: "?${def}"?\\)`), flag);
    }
    for (const flag of [
      "--worker",
      "--auto-migrate",
      "--storage-sqldb-conn-string",
      "--temporal-address",
      "--temporal-namespace",
      "--temporal-tls",
      "--broker",
      "--nats-url",
      "--kafka-brokers",
    ]) {
      expect(help).to.include(flag);
    }
    expect(help).to.match(/--dead-letter-spool <dir> [^-]*\(default: <data-dir>\/dead-letter-spool\)/);
  });

  for (const [flag, value] of [
    ["--retry-period", "soon"],
    ["--max-attempts", "-3"],
    ["--max-attempts", "1001"],
    ["--retry-batch-size", "1.5"],
    ["--listen", "localhost"],
    ["--broker", "rabbitmq"],
    ["--min-backoff-delay", "0s"],
    ["--send-mode", "remote"],
    ["--signature-headers", "webhook"],
    ["--max-cached-workflows", "0"],
    ["--worker-deployment-name", "webhooks.v2"],
    ["--worker-deployment-name", "__webhooks"],
    ["--worker-build-id", "two words"],
  ]) {
    it(`rejects ${flag} ${value} with a message naming the flag`, async () => {
      const r = await runCommand("webhooks", ["serve", flag!, value!]);
      expect(r.code).to.not.equal(0);
      expect(r.stderr).to.include(flag);
    });
  }

  it("names the bound of --max-attempts", async () => {
    const r = await runCommand("webhooks", ["serve", "--max-attempts", "1001"]);
    expect(r.stderr).to.include(
      'at most 1000 (each run of a delivery carries its attempts so far), got "1001"',
    );
  });

  it("refuses a build id without a Worker Deployment, naming both flags and their variables", async () => {
    const r = await runCommand("webhooks", ["worker"], { TEMPORAL_WORKER_BUILD_ID: "b1" });
    expect(r.code).to.equal(1);
    expect(r.stderr).to.include(
      "--worker-build-id (TEMPORAL_WORKER_BUILD_ID) needs --worker-deployment-name (TEMPORAL_DEPLOYMENT_NAME)",
    );
  });

  it("reads TEMPORAL_TLS=false as off (a boolean flag's variable is parsed, not merely present)", async () => {
    const api = await startWebhooks({ env: { TEMPORAL_TLS: "false" } });
    try {
      expect((await fetch(`${api.url}/_healthcheck`)).status).to.equal(200);
    } finally {
      await api.stop();
    }
  });

  it("rejects a backoff cap below the first delay", async () => {
    const r = await runCommand("webhooks", [
      "worker",
      "--min-backoff-delay",
      "2h",
      "--max-backoff-delay",
      "1h",
    ]);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.include("--max-backoff-delay");
  });
});

describe("webhooks serve --worker --auto-migrate (real PostgreSQL and Temporal)", function () {
  this.timeout(120_000);
  let db: TestDatabase;
  let api: WebhooksUnderTest;

  before(async () => {
    db = await createTestDatabase({ migrated: false });
    api = await startWebhooks({ worker: true, db, args: ["--auto-migrate"] });
  });

  after(async () => {
    await api?.stop();
    await db?.drop();
  });

  it("answers /_healthcheck with every dependency checked", async () => {
    const res = await fetch(`${api.url}/_healthcheck`);
    expect(res.status).to.equal(200);
    expect(await res.json()).to.deep.equal({
      status: "ok",
      checks: { database: "ok", temporal: "ok", worker: "ok", broker: "ok", deadLetters: "ok" },
    });
  });

  it("applied the committed migrations to the empty database", async () => {
    expect(api.process.output).to.match(/"migration":"\d+_init".*"msg":"migration applied"/);
  });

  it("answers /_info with the version", async () => {
    const res = await fetch(`${api.url}/_info`);
    expect(await res.json()).to.deep.equal({ version: VERSION });
  });

  it("stops cleanly on SIGTERM", async () => {
    const code = await api.process.stop("SIGTERM");
    expect(code).to.equal(0);
    expect(api.process.output).to.include('"msg":"stopped"');
  });
});

describe("webhooks serve with a dead dependency", () => {
  it("fails at startup naming the unreachable Temporal address", async function () {
    this.timeout(60_000);
    const db = await createTestDatabase();
    try {
      const deadPort = await freePort();
      const r = await runCommand("webhooks", [
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--storage-sqldb-conn-string",
        db.url,
        "--temporal-address",
        `127.0.0.1:${deadPort}`,
      ]);
      expect(r.code).to.equal(1);
      expect(r.stderr).to.include(`cannot reach Temporal at 127.0.0.1:${deadPort}`);
    } finally {
      await db.drop();
    }
  });

  it("fails at startup naming a --dead-letter-spool it cannot write to", async function () {
    this.timeout(60_000);
    const db = await createTestDatabase();
    try {
      const r = await runCommand("webhooks", [
        "worker",
        ...["--listen", "127.0.0.1:0", "--storage-sqldb-conn-string", db.url],
        ...["--temporal-address", (await testTemporal()).address, "--task-queue", `spool-${db.name}`],
        ...["--broker-topics", `spool-${db.name}`, "--dead-letter-spool", "/dev/null/spool"],
      ]);
      expect(r.code).to.equal(1);
      expect(r.stderr).to.include("cannot use --dead-letter-spool /dev/null/spool: ENOTDIR");
    } finally {
      await db.drop();
    }
  });

  it("fails at startup naming a database that does not answer", async () => {
    const deadPort = await freePort();
    const r = await runCommand("webhooks", [
      "serve",
      "--listen",
      "127.0.0.1:0",
      "--storage-sqldb-conn-string",
      `postgresql://nobody:x@127.0.0.1:${deadPort}/none`,
    ]);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.include(
      `cannot use the database at postgresql://nobody:***@127.0.0.1:${deadPort}/none`,
    );
  });
});
