import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import { freePort } from "../support/ports.js";
import { commandPath } from "../support/process.js";

/** `npm start`'s launcher on free ports: everything up, healthy, and gone after SIGTERM. */
describe("the stack launcher (npm start)", function () {
  this.timeout(180_000);
  let stack: ChildProcess;
  let output = "";

  it("starts Temporal with its Web UI and every service, then stops them all on SIGTERM", async () => {
    const [temporalPort, uiPort, apiPort] = [await freePort(), await freePort(), await freePort()];
    const dataDir = await mkdtemp(path.join(tmpdir(), "etp-stack-"));
    stack = spawn(process.execPath, [
      commandPath("stack"),
      "--data-dir",
      dataDir,
      "--temporal-port",
      String(temporalPort),
      "--ui-port",
      String(uiPort),
      "--api-port",
      String(apiPort),
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
    const health = await fetch(`http://127.0.0.1:${apiPort}/_healthcheck`);
    expect(health.status).to.equal(200);

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
