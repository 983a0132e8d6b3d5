import { expect } from "chai";
import { fromRoot } from "../../common/paths.js";
import { runCommand } from "../support/process.js";
import { ensureClientTools } from "./client-tools.js";

/**
 * The committed clients (clients/: the document, the TypeScript types, the Python package's
 * generated part) are what scripts/generate-clients.ts makes from api/openapi.ts now: it
 * regenerates them into a temporary folder with the pinned generators and compares.
 */
describe("the generated clients", function () {
  this.timeout(120_000);
  before(ensureClientTools);

  it("match the OpenAPI document of the code (else: node dist/scripts/generate-clients.js)", async () => {
    const result = await runCommand({ file: process.execPath, cwd: fromRoot(".") }, [
      fromRoot("dist/scripts/generate-clients.js"),
      "--check",
    ]);
    expect(result.code, result.stdout + result.stderr).to.equal(0);
    expect(result.stdout).to.include("the committed clients match api/openapi.ts");
  });
});
