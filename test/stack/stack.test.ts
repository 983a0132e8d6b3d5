// tags: @temporal-server (also run on the production Temporal server: npm run test:temporal-server)
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import { freePort } from "../support/ports.js";
import { commandPath } from "../support/process.js";
import { freeServerPort } from "../support/temporal.js";

/**
 * `npm start`'s launcher on free ports: everything up, healthy, and gone after
 * SIGTERM; with TEST_TEMPORAL=server on the production Temporal server.
 */
const temporalArgs =
  process.env.TEST_TEMPORAL === "server"
    ? ["--temporal", "server", "--temporal-name", "temporal_stack_test"]
    : [];

describe("the stack launcher (npm start)", function () {
  this.timeout(180_000);
  let stack: ChildProcess;
  let output = "";

  it("starts Temporal with its Web UI and every service (webhooks, rate limit, entity server), then stops them all on SIGTERM", async () => {
    const ports: number[] = [];
    for (let i = 0; i < 7; i++) ports.push(await freePort());
    const [freeTemporalPort, uiPort, apiPort, rlPort, rlGrpcPort, rlDebugPort, entityPort] = ports;
    // The production server takes a range of ports below 32768 beside its frontend.
    const temporalPort = temporalArgs.length ? await freeServerPort(1) : freeTemporalPort;
    const dataDir = await mkdtemp(path.join(tmpdir(), "etp-stack-"));
    stack = spawn(process.execPath, [
      commandPath("stack"),
      ...temporalArgs,
      "--data-dir",
      dataDir,
      "--temporal-port",
      String(temporalPort),
      "--ui-port",
      String(uiPort),
      "--api-port",
      String(apiPort),
      "--ratelimit-port",
      String(rlPort),
      "--ratelimit-grpc-port",
      String(rlGrpcPort),
      "--ratelimit-debug-port",
      String(rlDebugPort),
      "--entity-port",
      String(entityPort),
    ]);
    stack.stdout!.on("data", (d) => {
      output += d;
    });
    stack.stderr!.on("data", (d) => {
      output += d;
    });
    const deadline = Date.now() + 150_000;
    while (!output.includes("stack ready")) {
      if (stack.exitCode !== null || Date.now() > deadline)
        throw new Error(`stack did not start:\n${output}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(output).to.include(`Temporal Web UI         http://127.0.0.1:${uiPort}`);
    expect((await fetch(`http://127.0.0.1:${uiPort}/`)).status).to.equal(200);
    for (const url of [
      `http://127.0.0.1:${apiPort}/_healthcheck`,
      `http://127.0.0.1:${rlPort}/healthcheck`,
      `http://127.0.0.1:${entityPort}/_healthcheck`,
    ]) {
      expect((await fetch(url)).status, url).to.equal(200);
    }
    const decision = await fetch(`http://127.0.0.1:${rlPort}/json`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        domain: "example",
        descriptors: [{ entries: [{ key: "unknown", value: "x" }] }],
      }),
    });
    expect(decision.status).to.equal(200);
    // A ready-made portal URL of the default tenant, its token good for the API.
    const portal = new RegExp(
      `Consumer portal +(http://127\\.0\\.0\\.1:${apiPort}/portal/#token=(\\S+))`,
    ).exec(output);
    expect(portal, output).to.not.equal(null);
    const session = await fetch(`http://127.0.0.1:${apiPort}/portal-sessions/current`, {
      headers: { authorization: `Bearer ${portal![2]}` },
    });
    expect(session.status).to.equal(200);
    const bootstrap = (await session.json()) as { tenant: { uid: string }; expiresAt: string };
    expect(bootstrap.tenant.uid).to.equal("default");
    expect(Date.parse(bootstrap.expiresAt) - Date.now()).to.be.within(23 * 3_600_000, 24 * 3_600_000);

    const exited = new Promise<number | null>((resolve) => stack.once("exit", (code) => resolve(code)));
    stack.kill("SIGTERM");
    expect(await exited).to.equal(0);
    expect(output).to.include("stack stopped");
    const refused = await fetch(`http://127.0.0.1:${apiPort}/_healthcheck`).then(
      () => false,
      () => true,
    );
    expect(refused, "API gone").to.equal(true);
    const uiGone = await fetch(`http://127.0.0.1:${uiPort}/`).then(
      () => false,
      () => true,
    );
    expect(uiGone, "Temporal gone").to.equal(true);
  });

  after(() => {
    if (stack && stack.exitCode === null) stack.kill("SIGKILL");
  });
});
