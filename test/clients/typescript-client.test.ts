import { cp, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { expect } from "chai";
import { fromRoot } from "../../common/paths.js";
import { cleanFolder, run, TEST_VECTORS } from "./client-tools.js";
import { type LiveApi, startLiveApi } from "./live-api.js";

const PACKAGE = fromRoot("clients/typescript");

/**
 * The TypeScript client as an integrator gets it: `npm pack`ed, installed into an empty
 * project, and its own tests (node's test runner: clients/typescript/test) run from there:
 * the shared signature vectors, retries, and the live API.
 */
describe("the TypeScript client package", function () {
  this.timeout(240_000);
  let api: LiveApi;
  let project: string;

  before(async () => {
    api = await startLiveApi();
    project = await cleanFolder("ts-client");
    const packed = JSON.parse(await run("npm", ["pack", "--json", "--pack-destination", project], PACKAGE));
    const tarball = path.join(project, packed[0].filename);
    await writeFile(path.join(project, "package.json"), JSON.stringify({ type: "module", private: true }));
    await run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", tarball], project);
    await cp(path.join(PACKAGE, "test"), path.join(project, "test"), { recursive: true });
  });
  after(async () => {
    await api?.stop();
    if (project) await rm(project, { recursive: true, force: true });
  });

  it("packs the built library and its types only", async () => {
    const packed = JSON.parse(await run("npm", ["pack", "--dry-run", "--json"], PACKAGE));
    const files: string[] = packed[0].files.map((f: { path: string }) => f.path);
    expect(files).to.include.members(["dist/index.js", "dist/index.d.ts", "dist/generated/openapi.d.ts"]);
    expect(files.filter((f) => !f.startsWith("dist/") && f !== "package.json")).to.deep.equal([]);
  });

  it("passes its tests from the installed package: vectors, retries and the live API", async () => {
    const output = await run(
      process.execPath,
      ["--test", "test/vectors.test.mjs", "test/retry.test.mjs", "test/live.test.mjs"],
      project,
      { TEST_VECTORS, WEBHOOKS_URL: api.url, WEBHOOKS_TOKEN: api.token },
    );
    expect(output).to.match(/^# fail 0$/m);
    expect(output).to.match(/^# pass [1-9]\d*$/m);
    expect(output).to.include(
      "ok 1 - tenant, config, events, paged deliveries, replay, secret and verified deliveries",
    );
  });
});
