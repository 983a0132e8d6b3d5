import { execFileSync } from "node:child_process";
import { expect } from "chai";
import { repoRoot } from "../../common/paths.js";

describe("dependency tree", () => {
  it("holds exactly one protobufjs (Temporal's JSON history replay breaks with two)", () => {
    const found = execFileSync(
      "find",
      ["node_modules", "-path", "*/protobufjs/package.json", "-not", "-path", "*/protobufjs/*/*"],
      {
        cwd: repoRoot,
        encoding: "utf8",
      },
    )
      .split("\n")
      .filter(Boolean);
    expect(found).to.deep.equal(["node_modules/protobufjs/package.json"]);
  });
});
