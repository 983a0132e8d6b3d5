// The test groups are read from the sources (tags and imports), so a file lands in
// `npm run test:fast` or in the production-server half without any list of paths.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { fromRoot } from "../../common/paths.js";
import {
  parallelOrder,
  readTestFiles,
  selectTests,
  TEMPORAL_SERVER,
  TEMPORAL_SERVER_ONLY,
  tagsOf,
} from "../support/test-groups.js";

describe("test groups read from the sources", () => {
  describe("on a small tree", () => {
    let root: string;
    const write = (rel: string, text: string) => {
      mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
      writeFileSync(path.join(root, rel), text);
    };
    const group = () =>
      Object.fromEntries(readTestFiles(root).map((f) => [f.source, f.needsServices ?? "service-free"]));

    before(() => {
      root = mkdtempSync(path.join(os.tmpdir(), "etp-test-groups-"));
      write("test/support/db.ts", '// tags: @needs-services (a database)\nexport const url = "x";\n');
      write(
        "test/support/env.ts",
        'import { url } from "./db.js";\nimport "./loop.js";\nexport const e = url;\n',
      );
      write("test/support/loop.ts", 'import { e } from "./env.js";\nexport const l = e;\n');
      write(
        "test/support/plain.ts",
        "// Mentions @needs-services in prose, which is no tag.\nexport const p = 1;\n",
      );
      write("core/store.ts", `import pg from "${"p"}g";\nexport const s = pg;\n`);
      write("test/a/direct.test.ts", 'import { url } from "../support/db.js";\n');
      write("test/a/through.test.ts", 'import type { e } from "../support/env.js";\n');
      // Package names spliced in, so that this file itself imports no service client to a reader.
      write("test/a/client.test.ts", `import { Client } from "${"@temporalio/"}client";\n`);
      write("test/a/subpath.test.ts", `const m = await import("${"pg/"}lib/client.js");\n`);
      write(
        "test/b/pure.test.ts",
        'import { s } from "../../core/store.js";\nimport { p } from "../support/plain.js";\n',
      );
      write(
        "test/b/tagged.test.ts",
        '// tags: @temporal-server @other (free text after the tags)\nimport { p } from "../support/plain.js";\n',
      );
      write("test/c/only.test.ts", "// tags: @needs-services\n");
    });
    after(() => rmSync(root, { recursive: true, force: true }));

    it("puts a file among the service tests through a tagged module, however deep, naming the chain", () => {
      const g = group();
      expect(g["test/a/direct.test.ts"]).to.equal(
        "test/a/direct.test.ts → test/support/db.ts is tagged @needs-services",
      );
      // Type-only imports count, and the import circle env → loop → env ends.
      expect(g["test/a/through.test.ts"]).to.equal(
        "test/a/through.test.ts → test/support/env.ts → test/support/db.ts is tagged @needs-services",
      );
      expect(g["test/c/only.test.ts"]).to.equal("test/c/only.test.ts is tagged @needs-services");
    });

    it("puts a file among the service tests when it imports a service's client, dynamically or by subpath", () => {
      const g = group();
      expect(g["test/a/client.test.ts"]).to.equal("test/a/client.test.ts imports @temporalio/client");
      expect(g["test/a/subpath.test.ts"]).to.equal("test/a/subpath.test.ts imports pg");
    });

    it("does not follow product code, and a tag named in prose is no tag", () => {
      const g = group();
      expect(g["test/b/pure.test.ts"]).to.equal("service-free");
      expect(g["test/b/tagged.test.ts"]).to.equal("service-free");
    });

    it("selects compiled files by group, by folder and by tag", () => {
      expect(selectTests(root, { serviceFree: true })).to.deep.equal([
        "dist/test/b/pure.test.js",
        "dist/test/b/tagged.test.js",
      ]);
      expect(selectTests(root, { serviceFree: false })).to.have.length(5);
      expect(selectTests(root, { folders: ["c"], tags: ["@temporal-server"] })).to.deep.equal([
        "dist/test/b/tagged.test.js",
        "dist/test/c/only.test.js",
      ]);
      expect(selectTests(root, { serviceFree: true, tags: ["@other"] })).to.deep.equal([
        "dist/test/b/tagged.test.js",
      ]);
    });

    it("orders a parallel run: @long files first, then service files, then service-free ones", () => {
      write("test/d/slow.test.ts", "// tags: @long\n");
      try {
        expect(parallelOrder(root, { folders: ["c"] })).to.deep.equal([
          "dist/test/d/slow.test.js",
          "dist/test/a/client.test.js",
          "dist/test/a/direct.test.js",
          "dist/test/a/subpath.test.js",
          "dist/test/a/through.test.js",
          "dist/test/b/pure.test.js",
          "dist/test/b/tagged.test.js",
        ]);
        // A file carrying an excepted tag is left out (as @temporal-server-only files are).
        expect(parallelOrder(root, { folders: ["c"], tags: ["@other"] })).to.not.include(
          "dist/test/b/tagged.test.js",
        );
      } finally {
        rmSync(path.join(root, "test/d"), { recursive: true, force: true });
      }
    });

    it("reads every tag of a tag line and nothing else", () => {
      expect([
        ...tagsOf("// tags: @a @b-2 (not @c)\n// tags: @d\n  // tags: @e\n/* tags: @f */"),
      ]).to.deep.equal(["@a", "@b-2", "@d"]);
    });
  });

  describe("on this repository", () => {
    const files = readTestFiles(fromRoot("."));
    const bySource = new Map(files.map((f) => [f.source, f]));

    it("finds the delivery tests needing services and the validator's tests needing none", () => {
      expect(bySource.get("test/webhooks/delivery.test.ts")?.needsServices).to.match(
        /^test\/webhooks\/delivery\.test\.ts → test\/support\/delivery-env\.ts (imports|→)/,
      );
      expect(bySource.get("test/skbuild-settings/rules.test.ts")?.needsServices).to.equal(undefined);
      expect(bySource.get("test/tooling/test-groups.test.ts")?.needsServices).to.equal(undefined);
    });

    it("runs test/production and the tagged files on the production Temporal server", () => {
      const selected = selectTests(fromRoot("."), {
        folders: ["production"],
        tags: [TEMPORAL_SERVER, TEMPORAL_SERVER_ONLY],
      });
      expect(selected).to.include("dist/test/production/temporal-cluster.test.js");
      expect(selected).to.include("dist/test/webhooks/delivery.test.js");
      expect(selected).to.include("dist/test/webhooks/send-claims.test.js");
      expect(selected).to.not.include("dist/test/webhooks/tenants.test.js");
    });

    it("runs every other file in the main suite, the long ones first and a service-free one last", () => {
      const order = parallelOrder(fromRoot("."), {
        folders: ["production"],
        tags: [TEMPORAL_SERVER_ONLY],
      }).map((c) => bySource.get(c.replace(/^dist\//, "").replace(/\.js$/, ".ts")));
      const mainSuite = files.filter(
        (f) => !f.source.startsWith("test/production/") && !f.tags.has(TEMPORAL_SERVER_ONLY),
      );
      expect(order).to.have.length(mainSuite.length);
      // On both servers, or on the production server only.
      expect(order.map((f) => f?.source)).to.include("test/webhooks/delivery.test.ts");
      expect(order.map((f) => f?.source)).to.not.include("test/webhooks/send-claims.test.ts");
      const long = order.filter((f) => f?.tags.has("@long"));
      expect(long.map((f) => f?.source)).to.include("test/webhooks/poison-messages.test.ts");
      expect(order.slice(0, long.length)).to.deep.equal(long);
      expect(order.at(-1)?.needsServices).to.equal(undefined);
    });
  });
});
