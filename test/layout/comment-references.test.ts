// Comments point only at what exists: every repository file a comment names is there,
// and the specification the code follows is cited through its summary, docs/spec-rules.md.
import { expect } from "chai";
import { fromRoot } from "../../common/paths.js";
import {
  citesSpecOutside,
  commentsOf,
  headingAnchors,
  pathsIn,
  resolves,
  staleReferences,
} from "./comment-references.js";

describe("layout: comments point at files that exist", function () {
  this.timeout(120_000);

  it("names no missing file and cites the specification only through docs/", () => {
    const findings = staleReferences(fromRoot("."));
    expect(findings.map((f) => `${f.where}: ${f.what}`)).to.deep.equal([]);
  });

  it("reads comments, not strings or regular expressions, and joins consecutive line comments", () => {
    const text = [
      'const a = "// not a comment";',
      "const b = /\\/\\/ neither/;",
      "// one",
      "/** two */",
      // A template literal with a substitution, written without one here.
      `const c = \`$\{a} /* nor this */\`; // three`,
      "// last",
    ].join("\n");
    expect(commentsOf("x.ts", text).map((c) => c.text)).to.deep.equal([
      "// one",
      "/** two */",
      "// three\n// last",
    ]);
  });

  it("finds slashed and bare paths, not URLs", () => {
    const found = pathsIn(
      "// see workers/reconciliation.ts, ../common/paths.ts and send-claims.ts; https://example.com/a/b.ts",
    );
    expect(found.map((f) => f.path)).to.deep.equal([
      "workers/reconciliation.ts",
      "../common/paths.ts",
      "send-claims.ts",
    ]);
  });

  it("resolves from the root, the file's folder, or a compiled module's source", () => {
    const root = fromRoot(".");
    const names = new Set(["reconciliation.ts"]);
    expect(resolves(root, "workers/x.ts", "workers/reconciliation.ts", names)).to.equal(true);
    expect(resolves(root, "workers/x.ts", "./reconciliation.ts", names)).to.equal(true);
    expect(resolves(root, "test/x.ts", "dist/cmd/stack.js", names)).to.equal(true);
    expect(resolves(root, "workers/x.ts", "reconciliation.ts", names)).to.equal(true);
    expect(resolves(root, "workers/x.ts", "workers/redis-client.ts", names)).to.equal(false);
    expect(resolves(root, "workers/x.ts", "redis-client.ts", names)).to.equal(false);
  });

  it("fails a citation of the specification outside the repository", () => {
    expect(citesSpecOutside("// the spec's flag table")).to.equal(true);
    expect(citesSpecOutside("// see ../shared/spec/webhook-delivery.md")).to.equal(true);
    expect(citesSpecOutside("// the flag table (docs/spec-rules.md#webhook-flags)")).to.equal(false);
    expect(citesSpecOutside("// Mocha's spec reporter")).to.equal(false);
  });

  it("knows a section of docs/spec-rules.md by its heading's anchor", () => {
    expect([...headingAnchors("# Title\n\n## Retry loop: tick and batch\n")]).to.deep.equal([
      "title",
      "retry-loop-tick-and-batch",
    ]);
  });
});
