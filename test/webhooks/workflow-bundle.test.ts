import { cp, mkdir, mkdtemp, readdir, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { DefaultLogger } from "@temporalio/worker";
import { expect } from "chai";
import { createLogger } from "../../common/logger.js";
import {
  type BundlePlace,
  NOT_HASHED,
  savedWorkflowBundle,
  workflowBuildId,
} from "../../workers/workflow-bundle.js";

const DIST = fileURLToPath(new URL("../../", import.meta.url));
const NODE_MODULES = fileURLToPath(new URL("../../../node_modules", import.meta.url));

/**
 * Workers bundle the workflow code once per build and plugin set, not at every start
 * (workers/workflow-bundle.ts). The test works on a copy of dist/ with a bundle folder of
 * its own: a file it adds to the compiled code, and the bundles it counts, then touch no
 * process of the other test files running beside it (nor a release built meanwhile).
 */
describe("the workflow bundle saved per build", function () {
  this.timeout(60_000);
  const logger = createLogger("workflow-bundle-test", "silent");
  const sdkLogger = new DefaultLogger("WARN");
  const plugin = { name: "bundle-test" } as never;
  let root: string;
  let place: BundlePlace;
  const saved = async () => (await readdir(place.bundles).catch(() => [] as string[])).sort();

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "workflow-bundle-test-"));
    place = { dist: join(root, "dist"), bundles: join(root, "bundles") };
    // The copy leaves out what the key does not read.
    await cp(DIST, place.dist, {
      recursive: true,
      filter: (src) => !NOT_HASHED.has(src.slice(DIST.length).split("/")[0]!),
    });
    // The bundler resolves @temporalio/workflow from the workflow files upwards.
    await symlink(NODE_MODULES, join(root, "node_modules"));
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  it("bundles once, saves it, and the next start reads the saved bundle", async () => {
    let started = Date.now();
    const first = await savedWorkflowBundle(logger, sdkLogger, [plugin], place);
    const bundling = Date.now() - started;
    const added = await saved();
    expect(added).to.have.length(1);
    expect((await stat(join(place.bundles, added[0]!))).size).to.equal(Buffer.byteLength(first.code));
    expect(first.code).to.include("deliverWebhook");

    started = Date.now();
    const second = await savedWorkflowBundle(logger, sdkLogger, [plugin], place);
    console.log(`      bundled in ${bundling} ms, read back in ${Date.now() - started} ms`);
    expect(second.code).to.equal(first.code);
    expect(await saved()).to.deep.equal(added);
  });

  it("bundles again when the compiled code changes, or the plugins do", async () => {
    await savedWorkflowBundle(logger, sdkLogger, [plugin], place);
    expect(await saved()).to.have.length(1);
    // Another plugin set: another bundle.
    await savedWorkflowBundle(logger, sdkLogger, [plugin, { name: "bundle-test-2" } as never], place);
    expect(await saved()).to.have.length(2);
    // A new compiled file (as a build adds one): another bundle again.
    await writeFile(join(place.dist, "workers", "added-by-a-build.js"), "export const changed = true;\n");
    await savedWorkflowBundle(logger, sdkLogger, [plugin], place);
    expect(await saved()).to.have.length(3);
    // Tests are not part of the key: adding one reads the saved bundle.
    await mkdir(join(place.dist, "test"));
    await writeFile(join(place.dist, "test", "added.test.js"), "export {};\n");
    await savedWorkflowBundle(logger, sdkLogger, [plugin], place);
    expect(await saved()).to.have.length(3);
  });

  it("bundles the versioned entry apart; the build id is the plain bundle's hash, whatever the plugins", async () => {
    const plain = await savedWorkflowBundle(logger, sdkLogger, [], place);
    const buildId = await workflowBuildId(place.dist);
    expect(await saved()).to.deep.equal([`${buildId}.js`]);
    const versioned = await savedWorkflowBundle(logger, sdkLogger, [], place, "versioned");
    expect(await saved()).to.have.length(2);
    expect(versioned.code).to.include("VERSIONING_BEHAVIOURS");
    expect(plain.code).to.not.include("VERSIONING_BEHAVIOURS");
    await savedWorkflowBundle(logger, sdkLogger, [plugin], place, "versioned");
    expect(await workflowBuildId(place.dist)).to.equal(buildId);
    // A change of the compiled code is a build of its own.
    await writeFile(join(place.dist, "workflows", "added-by-a-build.js"), "export const changed = true;\n");
    expect(await workflowBuildId(place.dist)).to.not.equal(buildId);
  });
});
