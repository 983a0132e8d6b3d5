// The import graph has one direction: no file, and no folder, imports itself back
// through others. A reader can then take any folder as built from the ones it imports.
import { readdirSync } from "node:fs";
import path from "node:path";
import { expect } from "chai";
import { fromRoot } from "../../common/paths.js";
import { circles, folderGraph, readModuleGraph } from "./module-graph.js";

describe("layout: imports in one direction", function () {
  this.timeout(120_000);
  const graph = readModuleGraph(fromRoot("."));
  // The consumer portal is browser code with its own tsconfig (DOM, JSX): its own graph.
  const portal = readModuleGraph(fromRoot("portal"));

  it("reads the project's modules", () => {
    expect(graph.edges.size).to.be.greaterThan(200);
    expect(graph.edges.get("cmd/webhooks.ts")?.size).to.be.greaterThan(0);
  });

  it("covers every TypeScript file of the repository", () => {
    const skip = new Set([
      "node_modules",
      "dist",
      "generated",
      ".tools",
      ".data",
      ".git",
      "test-output",
      "gen",
    ]);
    const found: string[] = [];
    const walk = (dir: string) => {
      for (const entry of readdirSync(fromRoot(dir), { withFileTypes: true })) {
        const rel = path.join(dir, entry.name);
        if (entry.isDirectory() && !skip.has(entry.name) && !entry.name.startsWith("dist-")) walk(rel);
        else if (entry.isFile() && entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") && dir !== ".")
          found.push(rel);
      }
    };
    walk(".");
    const inPortal = (file: string) => portal.edges.has(path.relative("portal", file));
    expect(found.filter((file) => !graph.edges.has(file) && !inPortal(file))).to.deep.equal([]);
  });

  it("has no import circle between files", () => {
    expect(circles(graph.edges)).to.deep.equal([]);
    expect(circles(portal.edges)).to.deep.equal([]);
  });

  it("has no import circle between folders", () => {
    expect(circles(folderGraph(graph))).to.deep.equal([]);
  });

  it("finds a circle when there is one", () => {
    const edges = new Map([
      ["a", new Set(["b"])],
      ["b", new Set(["c"])],
      ["c", new Set(["a"])],
      ["d", new Set(["a"])],
    ]);
    expect(circles(edges)).to.deep.equal([["a", "b", "c"]]);
  });
});
