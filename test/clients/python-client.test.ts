import { cp, readdir, rm } from "node:fs/promises";
import path from "node:path";
import { expect } from "chai";
import { fromRoot } from "../../common/paths.js";
import {
  cleanFolder,
  ensureClientTools,
  run,
  TEST_VECTORS,
  TEST_WHEELS,
  TOOLS_VENV,
} from "./client-tools.js";
import { type LiveApi, startLiveApi } from "./live-api.js";

const PACKAGE = fromRoot("clients/python");

/**
 * The Python client as an integrator gets it: a wheel built from clients/python, installed
 * into a fresh virtual environment (its dependencies from the wheels setup downloaded),
 * and its own tests (pytest: clients/python/tests) run from there: the shared signature
 * vectors, retries, and the live API.
 */
describe("the Python client package", function () {
  this.timeout(240_000);
  let api: LiveApi;
  let work: string;
  let python: string;
  let wheel: string;

  before(async () => {
    await ensureClientTools();
    api = await startLiveApi();
    work = await cleanFolder("py-client");
    await run(
      path.join(TOOLS_VENV, "bin/python"),
      ["-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "-w", work, PACKAGE],
      work,
    );
    wheel = (await readdir(work)).find((f) => f.endsWith(".whl")) ?? "";
    await run("python3", ["-m", "venv", "venv"], work);
    python = path.join(work, "venv/bin/python");
    await run(
      python,
      [
        "-m",
        "pip",
        "install",
        "--quiet",
        "--no-index",
        "--find-links",
        TEST_WHEELS,
        path.join(work, wheel),
        "pytest",
      ],
      work,
    );
    await cp(path.join(PACKAGE, "tests"), path.join(work, "tests"), { recursive: true });
  });
  after(async () => {
    await api?.stop();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it("keeps the hand-written Python to its style (ruff, settings in clients/python/pyproject.toml)", async () => {
    const ruff = path.join(TOOLS_VENV, "bin/ruff");
    await run(ruff, ["check", "--no-cache", "."], PACKAGE);
    await run(ruff, ["format", "--no-cache", "--check", "."], PACKAGE);
  });

  it("builds a wheel of the package with its generated part", async () => {
    expect(wheel).to.match(/^event_traffic_webhooks_client-[\d.]+-py3-none-any\.whl$/);
    const listed = await run(python, ["-m", "pip", "show", "--files", "event-traffic-webhooks-client"], work);
    expect(listed).to.include("webhooks_client/webhook.py");
    expect(listed).to.include("webhooks_client/generated/api/default/list_config_deliveries.py");
  });

  it("passes its tests from the installed wheel: vectors, retries and the live API", async () => {
    // From the temporary folder, so that `webhooks_client` can only come from the venv.
    const output = await run(python, ["-m", "pytest", "-v", "-p", "no:cacheprovider", "tests"], work, {
      TEST_VECTORS,
      WEBHOOKS_URL: api.url,
      WEBHOOKS_TOKEN: api.token,
    });
    expect(output).to.match(/^=+ \d+ passed in /m);
    for (const name of [
      "test_vector[rotated secret",
      "test_503_with_retry_after",
      "test_tenant_config_events_paged",
    ])
      expect(output).to.match(new RegExp(`${name.replace(/[[\]]/g, "\\$&")}.* PASSED`));
  });
});
