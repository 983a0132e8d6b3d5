import { readdir, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { DefaultLogger } from "@temporalio/worker";
import { expect } from "chai";
import { createLogger } from "../../common/logger.js";
import { savedWorkflowBundle } from "../../workers/workflow-bundle.js";

const DIST = fileURLToPath(new URL("../../", import.meta.url));
const BUNDLES = join(DIST, ".workflow-bundles");

/**
 * Workers bundle the workflow code once per build and plugin set, not at every start
 * (workers/workflow-bundle.ts). A plugin with a name of the test's own makes a key no
 * other process uses, so the first call here always bundles.
 */
describe("the workflow bundle saved per build", function () {
  this.timeout(60_000);
  const logger = createLogger("workflow-bundle-test", "silent");
  const sdkLogger = new DefaultLogger("WARN");
  const name = `bundle-test-${process.pid}-${Date.now()}`;
  const plugin = { name } as never;
  const saved = async () => new Set(await readdir(BUNDLES).catch(() => [] as string[]));

  it("bundles once, saves it, and the next start reads the saved bundle", async () => {
    const before = await saved();
    let started = Date.now();
    const first = await savedWorkflowBundle(logger, sdkLogger, [plugin]);
    const bundling = Date.now() - started;
    const added = [...(await saved())].filter((n) => !before.has(n));
    expect(added).to.have.length(1);
    const path = join(BUNDLES, added[0]!);
    expect((await stat(path)).size).to.equal(Buffer.byteLength(first.code));
    expect(first.code).to.include("deliverWebhook");

    started = Date.now();
    const second = await savedWorkflowBundle(logger, sdkLogger, [plugin]);
    console.log(`      bundled in ${bundling} ms, read back in ${Date.now() - started} ms`);
    expect(second.code).to.equal(first.code);
    expect([...(await saved())].filter((n) => !before.has(n))).to.deep.equal(added);
    await rm(path, { force: true });
  });

  it("bundles again when the compiled code changes, or the plugins do", async () => {
    const before = await saved();
    const count = async () => [...(await saved())].filter((n) => !before.has(n)).length;
    try {
      await savedWorkflowBundle(logger, sdkLogger, [plugin]);
      expect(await count()).to.equal(1);
      // Another plugin set: another bundle.
      await savedWorkflowBundle(logger, sdkLogger, [plugin, { name: `${name}-2` } as never]);
      expect(await count()).to.equal(2);
      // A new compiled file under dist/ (as a build adds one): another bundle again.
      const extra = join(DIST, "workers", `bundle-test-${process.pid}.js`);
      await writeFile(extra, "export const changed = true;\n");
      try {
        await savedWorkflowBundle(logger, sdkLogger, [plugin]);
        expect(await count()).to.equal(3);
      } finally {
        await rm(extra, { force: true });
      }
    } finally {
      for (const n of await saved()) if (!before.has(n)) await rm(join(BUNDLES, n), { force: true });
    }
  });
});
