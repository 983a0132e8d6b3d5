import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import { transform } from "esbuild";
import { fromRoot } from "../../common/paths.js";
import { SIGNATURE_VECTORS, signatureVectors } from "../support/signature-vectors.js";

const cases = signatureVectors().cases;

/** The portal's snippets module, compiled by the bundler the portal is built with. */
async function portalSnippets(): Promise<{ lang: string; code: string }[]> {
  const { code } = await transform(readFileSync(fromRoot("portal/src/snippets.ts"), "utf8"), {
    loader: "ts",
    format: "esm",
  });
  const module = await import(`data:text/javascript;base64,${Buffer.from(code).toString("base64")}`);
  return module.snippets;
}

// Each language's harness verifies every vector with the snippet as a receiver would copy it,
// and prints the answers as a JSON array of booleans.
const HARNESSES: Record<string, { files: (code: string) => Record<string, string>; run: string[] }> = {
  node: {
    files: (code) => ({
      "verify.mjs": code,
      "main.mjs": `import { readFileSync } from "node:fs";
import { verify } from "./verify.mjs";
const { cases } = JSON.parse(readFileSync(process.argv[2], "utf8"));
console.log(JSON.stringify(cases.map((c) => verify(c.secret, c.headers, Buffer.from(c.body), 300, c.now))));`,
    }),
    run: [process.execPath, "main.mjs"],
  },
  python: {
    files: (code) => ({
      "verify.py": code,
      "main.py": `import json, sys
from verify import verify
cases = json.load(open(sys.argv[1], encoding="utf-8"))["cases"]
print(json.dumps([verify(c["secret"], c["headers"], c["body"].encode(), 300, c["now"]) for c in cases]))`,
    }),
    run: ["python3", "main.py"],
  },
  go: {
    files: (code) => ({
      "go.mod": "module snippet\n\ngo 1.21\n",
      "verify.go": `package main\n\n${code}\n`,
      "main.go": `package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"time"
)

func main() {
	raw, _ := os.ReadFile(os.Args[1])
	var file struct {
		Cases []struct {
			Secret  string            \`json:"secret"\`
			Headers map[string]string \`json:"headers"\`
			Body    string            \`json:"body"\`
			Now     int64             \`json:"now"\`
		} \`json:"cases"\`
	}
	if err := json.Unmarshal(raw, &file); err != nil {
		panic(err)
	}
	answers := []bool{}
	for _, c := range file.Cases {
		h := http.Header{}
		for name, value := range c.Headers {
			h.Set(name, value)
		}
		answers = append(answers, VerifyAt(c.Secret, h, []byte(c.Body), time.Unix(c.Now, 0)))
	}
	out, _ := json.Marshal(answers)
	fmt.Println(string(out))
}
`,
    }),
    run: ["go", "run", "."],
  },
};

/**
 * The verification snippets the portal gives a customer to copy (portal/src/snippets.ts), run
 * in their own languages against the signature vectors every client library's verifier
 * shares (clients/test-vectors.json): both header styles, a `whsec_` secret, a rotated
 * secret, a tampered body, a stale timestamp, a missing header.
 */
describe("the portal's signature-verification snippets", function () {
  this.timeout(180_000);
  const expected = cases.map((c) => c.expect === "ok");

  for (const lang of Object.keys(HARNESSES)) {
    it(`${lang}: accepts exactly the vectors the product's verifier accepts`, async () => {
      const snippet = (await portalSnippets()).find((s) => s.lang === lang);
      expect(snippet, `a ${lang} snippet`).to.not.equal(undefined);
      const harness = HARNESSES[lang]!;
      const dir = mkdtempSync(path.join(tmpdir(), `snippet-${lang}-`));
      try {
        for (const [name, text] of Object.entries(harness.files(snippet!.code)))
          writeFileSync(path.join(dir, name), text);
        const [command, ...args] = harness.run;
        const out = execFileSync(command!, [...args, SIGNATURE_VECTORS], { cwd: dir, encoding: "utf8" });
        const answers = JSON.parse(out.trim()) as boolean[];
        const wrong = cases.filter((_, i) => answers[i] !== expected[i]).map((c) => c.name);
        expect(wrong, "vectors answered wrongly").to.deep.equal([]);
        expect(answers).to.have.length(cases.length);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
