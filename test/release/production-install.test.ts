// tags: @long (over 45 s: among the first files the parallel suite starts)
// A release as an operator installs it: scripts/release.sh writes the tree, `npm ci
// --omit=dev` installs it without the development dependencies, and each service command
// runs from it against the real components (PostgreSQL, NATS, Temporal, Redis).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import { fromRoot } from "../../common/paths.js";
import { workflowBuildId } from "../../workers/workflow-bundle.js";
import { freePort } from "../support/ports.js";
import { createTestDatabase, type TestDatabase } from "../support/postgres.js";
import { runCommand, ServiceProcess } from "../support/process.js";
import { startWebhooks, type WebhooksUnderTest } from "../support/webhooks-server.js";

describe("production install: a release tree with npm ci --omit=dev", function () {
  this.timeout(600_000);
  let dir: string;
  let db: TestDatabase | undefined;
  let webhooks: WebhooksUnderTest | undefined;
  const running: ServiceProcess[] = [];
  const bin = (name: string) => ({ file: path.join(dir, "bin", name), cwd: dir });

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "etp-release-"));
    const built = await runCommand({ file: "bash", cwd: fromRoot(".") }, [
      fromRoot("scripts", "release.sh"),
      "--prebuilt", // the dist/ the tests run from is built; recompiling it would pull it from under them
      dir,
    ]);
    expect(built.code, built.stdout + built.stderr).to.equal(0);
    const installed = await runCommand({ file: "npm", cwd: dir }, [
      "ci",
      "--omit=dev",
      "--no-audit",
      "--no-fund",
      "--prefer-offline",
    ]);
    expect(installed.code, installed.stdout + installed.stderr).to.equal(0);
  });

  after(async () => {
    await Promise.all([...running.map((r) => r.stop()), webhooks?.stop()]);
    await db?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("holds no test, benchmark or development dependency", () => {
    expect(existsSync(path.join(dir, "dist", "test"))).to.equal(false);
    expect(existsSync(path.join(dir, "dist", "bench"))).to.equal(false);
    for (const dev of ["mocha", "chai", "@biomejs/biome", "ts-proto", "playwright-core"])
      expect(existsSync(path.join(dir, "node_modules", dev)), dev).to.equal(false);
    // The workflow code comes bundled once (plain and versioned), for workers to read instead of bundling at start.
    expect(readdirSync(path.join(dir, "dist", ".workflow-bundles"))).to.have.length(2);
  });

  it("names its Worker Versioning build id: the hash of its plain bundle, the workers' default", async () => {
    const buildId = readFileSync(path.join(dir, "build-id"), "utf8").trim();
    expect(buildId).to.equal(await workflowBuildId(path.join(dir, "dist")));
    expect(readdirSync(path.join(dir, "dist", ".workflow-bundles"))).to.include(`${buildId}.js`);
    expect(existsSync(path.join(dir, "scripts", "rollout.sh"))).to.equal(true);
  });

  it("webhooks serve --worker migrates a fresh database, takes a config and stops on SIGTERM", async () => {
    db = await createTestDatabase({ migrated: false });
    // The shared database is left for after(): the entity server reads it next.
    webhooks = await startWebhooks({
      worker: true,
      db,
      args: ["--auto-migrate"],
      executable: bin("webhooks"),
    });
    const created = await webhooks.call("POST", "/configs", {
      endpoint: "http://127.0.0.1:9/hook",
      eventTypes: ["release.check"],
    });
    expect(created.status, created.text).to.equal(200);
    expect(created.body.data.active).to.equal(true);
    const listed = await webhooks.call("GET", "/configs");
    expect(listed.body.cursor.data.map((c: { id: string }) => c.id)).to.deep.equal([created.body.data.id]);
    expect(await webhooks.process.stop(), webhooks.process.output).to.equal(0);
    // Its worker read the release's bundle: none was made at start.
    expect(webhooks.process.output).not.to.include("workflow code bundled");
  });

  it("entity-server serves the configs table of that database", async () => {
    if (!db) throw new Error("needs the database of the webhooks case");
    const port = await freePort();
    const entity = new ServiceProcess(bin("entity-server"), [
      "--listen",
      `127.0.0.1:${port}`,
      "--storage-sqldb-conn-string",
      db.url,
    ]);
    running.push(entity);
    await entity.waitHealthy(`http://127.0.0.1:${port}/_healthcheck`);
    const configs = (await (await fetch(`http://127.0.0.1:${port}/config.json`)).json()) as unknown[];
    expect(JSON.stringify(configs)).to.include("release.check");
    expect(await entity.stop(), entity.output).to.equal(0);
  });

  it("ratelimit decides with the shipped example rules on Redis, over /json and through ratelimit-client", async () => {
    const [httpPort, grpcPort, debugPort] = [await freePort(), await freePort(), await freePort()];
    const limiter = new ServiceProcess(bin("ratelimit"), [], {
      RUNTIME_ROOT: path.join(dir, "ratelimit", "examples"),
      RUNTIME_WATCH_ROOT: "false",
      HOST: "127.0.0.1",
      PORT: String(httpPort),
      GRPC_HOST: "127.0.0.1",
      GRPC_PORT: String(grpcPort),
      DEBUG_HOST: "127.0.0.1",
      DEBUG_PORT: String(debugPort),
      USE_STATSD: "false",
      KVSTORE_URL: process.env.TEST_REDIS_URL ?? "127.0.0.1:6379",
      CACHE_KEY_PREFIX: `release_${httpPort}:`,
    });
    running.push(limiter);
    await limiter.waitHealthy(`http://127.0.0.1:${httpPort}/healthcheck`);
    const decide = () =>
      fetch(`http://127.0.0.1:${httpPort}/json`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          domain: "example",
          descriptors: [{ entries: [{ key: "remote_address", value: `10.0.0.${httpPort % 250}` }] }],
        }),
      }).then((r) => r.json() as Promise<{ overallCode: string; statuses: { limitRemaining: number }[] }>);
    const first = await decide();
    expect(first.overallCode, JSON.stringify(first)).to.equal("OK");
    expect(first.statuses[0]?.limitRemaining).to.equal(9);
    const client = await runCommand(bin("ratelimit-client"), [
      "-dial_string",
      `127.0.0.1:${grpcPort}`,
      "-domain",
      "example",
      "-descriptors",
      "user=admin",
    ]);
    expect(client.code, client.stderr).to.equal(0);
    expect(client.stdout + client.stderr).to.include('"overallCode": "OK"');
    expect(await limiter.stop(), limiter.output).to.equal(0);
  });

  it("skbuild-settings validates a document and names what is wrong in a bad one", async () => {
    const good = path.join(dir, "good.toml");
    const bad = path.join(dir, "bad.toml");
    await writeFile(good, '[tool.scikit-build]\nminimum-version = "0.10"\nbuild-dir = "build/{wheel_tag}"\n');
    await writeFile(bad, "[tool.scikit-build]\nbuild-dir = 3\n");
    const ok = await runCommand(bin("skbuild-settings"), ["validate", good]);
    expect(ok.code, ok.stdout + ok.stderr).to.equal(0);
    const refused = await runCommand(bin("skbuild-settings"), ["validate", bad]);
    expect(refused.code).to.not.equal(0);
    expect(refused.stdout + refused.stderr).to.include("build-dir");
  });
});
