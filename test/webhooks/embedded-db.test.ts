import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import { freePort } from "../support/ports.js";
import { ServiceProcess } from "../support/process.js";
import { testTemporal } from "../support/temporal.js";

/** Without a connection string the service runs on the embedded PGlite database, kept across restarts. */
describe("embedded database (PGlite) when no connection string is given", function () {
  this.timeout(120_000);

  it("migrates, serves the API, keeps data across a restart and guards its folder", async () => {
    const temporal = await testTemporal();
    const dataDir = await mkdtemp(path.join(tmpdir(), "etp-pglite-"));
    const start = async () => {
      const port = await freePort();
      const env = { ...process.env, DATABASE_URL: "" };
      const p = new ServiceProcess(
        "webhooks",
        [
          "serve",
          "--auto-migrate",
          "--data-dir",
          dataDir,
          "--listen",
          `127.0.0.1:${port}`,
          "--temporal-address",
          temporal.address,
          "--audit-topic",
          "",
        ],
        env as Record<string, string>,
      );
      await p.waitHealthy(`http://127.0.0.1:${port}/_healthcheck`, 90_000);
      return { p, url: `http://127.0.0.1:${port}` };
    };

    const first = await start();
    expect(first.p.output).to.include("embedded PostgreSQL (PGlite) started");
    const created = await fetch(`${first.url}/configs`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ endpoint: "https://embedded.test/hook", eventTypes: ["a.b"] }),
    }).then((r) => r.json() as Promise<{ data: { id: string } }>);

    const port = await freePort();
    const second = new ServiceProcess(
      "webhooks",
      [
        "serve",
        "--data-dir",
        dataDir,
        "--listen",
        `127.0.0.1:${port}`,
        "--temporal-address",
        temporal.address,
      ],
      { DATABASE_URL: "" },
    );
    const code = await new Promise((resolve) => second.child.once("exit", resolve));
    expect(code).to.equal(1);
    expect(second.output).to.match(/embedded database .* is in use by process \d+/);

    expect(await first.p.stop()).to.equal(0);
    const again = await start();
    try {
      const list = (await fetch(`${again.url}/configs`).then((r) => r.json())) as {
        cursor: { data: { id: string }[] };
      };
      expect(list.cursor.data.map((c) => c.id)).to.deep.equal([created.data.id]);
    } finally {
      await again.p.stop();
    }
  });
});
