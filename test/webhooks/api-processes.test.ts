import http from "node:http";
import { expect } from "chai";
import { childPids, runCommand } from "../support/process.js";
import { startWebhooks, type WebhooksUnderTest } from "../support/webhooks-server.js";

/** One GET on a connection of its own, so the cluster hands it to the next process. */
const freshGet = (url: string) =>
  new Promise<number>((resolve, reject) => {
    http
      .get(url, { agent: false }, (res) => {
        res.resume().on("end", () => resolve(res.statusCode!));
      })
      .on("error", reject);
  });

describe("webhooks serve --processes", function () {
  this.timeout(120_000);
  let api: WebhooksUnderTest;

  before(async () => {
    api = await startWebhooks({ args: ["--processes", "2", "--audit-topic", ""] });
    await api.process.waitForOutput(
      /"processes":2.*webhooks API listening|webhooks API listening.*"processes":2/,
      60_000,
    );
  });
  after(async () => {
    await api?.stop();
  });

  const refreshes = async () => {
    const text = (await api.call("GET", "/metrics")).text;
    return Number(/^webhooks_config_list_refreshes_total\{kind="full"\} (\d+)/m.exec(text)?.[1] ?? 0);
  };

  it("serves from every process, and /metrics sums them whichever process answers", async () => {
    expect(childPids(api.process.child.pid!)).to.have.length(2);
    const created = await api.call("POST", "/configs", { endpoint: "https://p.test/a", eventTypes: ["a.b"] });
    expect(created.status, created.text).to.equal(200);
    // Each process loads the full list once on its first list: two processes, two loads, in every answer.
    for (let i = 0; i < 20; i++) expect(await freshGet(`${api.url}/configs`)).to.equal(200);
    for (let i = 0; i < 4; i++) expect(await refreshes()).to.equal(2);
  });

  it("replaces an API process that dies, and keeps serving", async () => {
    const [victim] = childPids(api.process.child.pid!);
    process.kill(victim!, "SIGKILL");
    await api.process.waitForOutput("an API process died: starting another");
    await api.process.waitForOutput(
      /API process serving[\s\S]*API process serving[\s\S]*API process serving/,
      60_000,
    );
    const now = childPids(api.process.child.pid!);
    expect(now).to.have.length(2);
    expect(now).to.not.include(victim);
    for (let i = 0; i < 10; i++) expect(await freshGet(`${api.url}/_healthcheck`)).to.equal(200);
  });

  it("stops every process on SIGTERM and exits 0", async () => {
    const children = childPids(api.process.child.pid!);
    expect(await api.process.stop()).to.equal(0);
    for (const pid of children) expect(() => process.kill(pid, 0), `pid ${pid} still alive`).to.throw();
    expect(api.process.output).to.match(/"msg":"stopped"/);
  });

  it("refuses --processes with --worker and without PostgreSQL, naming the flag", async () => {
    const withWorker = await runCommand("webhooks", [
      "serve",
      "--processes",
      "2",
      "--worker",
      "--storage-sqldb-conn-string",
      "postgresql://x@127.0.0.1/x",
    ]);
    expect(withWorker.code).to.equal(1);
    expect(withWorker.stderr).to.include("--processes serves the API only");
    const embedded = await runCommand("webhooks", ["serve", "--processes", "2"], { DATABASE_URL: "" });
    expect(embedded.code).to.equal(1);
    expect(embedded.stderr).to.include("--processes needs PostgreSQL");
    const zero = await runCommand("webhooks", ["serve", "--processes", "0"]);
    expect(zero.code).to.not.equal(0);
    expect(zero.stderr).to.include("--processes");
  });
});
