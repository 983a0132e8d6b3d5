// No function longer than a reader can hold: at most MAX_LINES lines, measured on the
// TypeScript syntax tree from the line of its first token to the line of its last. The
// exceptions are few and each says why; the backlog below lists the long functions not yet
// split, each with the length it has now, a budget that may only shrink.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { expect } from "chai";
import ts from "typescript";
import { fromRoot } from "../../common/paths.js";

const MAX_LINES = 100;

/** Folders never read: built output, tools, data, and generated code (protobuf, Prisma). */
const SKIP_DIRS = new Set([
  "node_modules",
  "dist",
  "generated",
  "gen",
  ".tools",
  ".data",
  ".git",
  "test-output",
]);

/**
 * Long functions allowed for good, by "file › name" (the name path of a function, see
 * `namePath`), each with why. Generated code is not read at all (SKIP_DIRS).
 */
const ALLOWED: ReadonlyMap<string, string> = new Map([
  [
    "skbuild-settings/schema.ts › sections",
    "a data table: the settings schema, one entry per setting, read top to bottom",
  ],
]);

/**
 * Known backlog: long functions not split yet, each with its length today. The budget only
 * shrinks: a function that grows past it fails, and one that got shorter fails until its
 * budget is lowered to match (or the entry removed, once it is at most MAX_LINES).
 */
const BACKLOG: ReadonlyMap<string, number> = new Map([]);

interface LongFunction {
  key: string;
  lines: number;
}

/** Whether a long function is allowed by where it is rather than by name. */
function allowedByPlace(file: string, node: ts.Node): string | undefined {
  // A mocha suite is a list of cases: describe/it/before… callbacks in a test file.
  if (file.startsWith("test/") && file.endsWith(".test.ts") && isMochaCallback(node)) return "test suite";
  // Benchmark mains are scripts run by hand, a sequence of measured steps.
  if (file.startsWith("bench/") && nameOf(node) === "main") return "bench script";
  return undefined;
}

const MOCHA = new Set(["describe", "it", "before", "after", "beforeEach", "afterEach", "context", "specify"]);

function isMochaCallback(node: ts.Node): boolean {
  const call = node.parent;
  if (!call || !ts.isCallExpression(call) || !call.arguments.includes(node as ts.Expression)) return false;
  const callee = call.expression;
  const base = ts.isPropertyAccessExpression(callee) ? callee.expression : callee; // describe.skip, it.only
  return ts.isIdentifier(base) && MOCHA.has(base.text);
}

/** A function's own name, or the name of what it is assigned to, or "(anonymous)". */
function nameOf(node: ts.Node): string {
  const named = node as ts.Node & { name?: ts.Node };
  if (named.name && (ts.isIdentifier(named.name) || ts.isStringLiteral(named.name))) return named.name.text;
  const parent = node.parent;
  if (
    parent &&
    (ts.isVariableDeclaration(parent) ||
      ts.isPropertyAssignment(parent) ||
      ts.isPropertyDeclaration(parent)) &&
    ts.isIdentifier(parent.name)
  )
    return parent.name.text;
  return "(anonymous)";
}

/** The names of the functions enclosing a node and its own, outermost first: "createX › send". */
function namePath(node: ts.Node): string {
  const names: string[] = [];
  for (let n: ts.Node | undefined = node; n; n = n.parent) if (isFunction(n)) names.unshift(nameOf(n));
  return names.join(" › ");
}

function isFunction(node: ts.Node): node is ts.FunctionLikeDeclaration {
  return ts.isFunctionLike(node) && (node as ts.FunctionLikeDeclaration).body !== undefined;
}

function sourceFiles(dir = "."): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(fromRoot(dir), { withFileTypes: true })) {
    const rel = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!SKIP_DIRS.has(entry.name) && !entry.name.startsWith("dist-")) found.push(...sourceFiles(rel));
    } else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith(".d.ts")) found.push(rel);
  }
  return found;
}

/** Every function over MAX_LINES lines that neither its place nor ALLOWED excuses. */
function longFunctions(file: string, text: string): LongFunction[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const lineOf = (pos: number) => source.getLineAndCharacterOfPosition(pos).line;
  const found: LongFunction[] = [];
  const visit = (node: ts.Node) => {
    if (isFunction(node)) {
      const lines = lineOf(node.end) - lineOf(node.getStart(source)) + 1;
      const key = `${file} › ${namePath(node)}`;
      if (lines > MAX_LINES && !allowedByPlace(file, node) && !ALLOWED.has(key)) found.push({ key, lines });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe("layout: functions a reader can hold", function () {
  this.timeout(120_000);
  const files = sourceFiles().map((file) => file.split(path.sep).join("/"));
  const long = files.flatMap((file) => longFunctions(file, readFileSync(fromRoot(file), "utf8")));

  it("reads the project's sources", () => {
    expect(files).to.include("cmd/webhooks.ts");
    expect(files).to.include("portal/src/endpoint-form.tsx");
    expect(files.some((f) => f.startsWith("generated/"))).to.equal(false);
  });

  it(`has no function over ${MAX_LINES} lines outside the allowed ones and the backlog`, () => {
    const unexpected = long.filter((f) => !BACKLOG.has(f.key)).map((f) => `${f.key}: ${f.lines} lines`);
    expect(unexpected).to.deep.equal([]);
  });

  it("keeps each backlog entry at its budget, and drops entries once split", () => {
    const now = new Map(long.map((f) => [f.key, f.lines]));
    const off = [...BACKLOG]
      .filter(([key, budget]) => now.get(key) !== budget)
      .map(([key, budget]) => {
        const lines = now.get(key);
        if (lines === undefined) return `${key}: at most ${MAX_LINES} lines now, remove it from the backlog`;
        return lines > budget
          ? `${key}: ${lines} lines, over its budget of ${budget}`
          : `${key}: ${lines} lines, lower its budget from ${budget}`;
      });
    expect(off).to.deep.equal([]);
  });

  it("keeps each allowed exception needed", () => {
    const all = files.flatMap((file) => {
      const source = ts.createSourceFile(
        file,
        readFileSync(fromRoot(file), "utf8"),
        ts.ScriptTarget.Latest,
        true,
      );
      const keys: string[] = [];
      const visit = (node: ts.Node) => {
        if (isFunction(node)) keys.push(`${file} › ${namePath(node)}`);
        ts.forEachChild(node, visit);
      };
      visit(source);
      return keys;
    });
    expect([...ALLOWED.keys()].filter((key) => !all.includes(key))).to.deep.equal([]);
  });

  it("measures a function from its first line to its last", () => {
    const body = Array.from({ length: MAX_LINES - 1 }, (_, i) => `  const a${i} = ${i};`).join("\n");
    const text = `function fits() {\n${body.split("\n").slice(1).join("\n")}\n}\nfunction over() {\n${body}\n}\n`;
    expect(longFunctions("x/sample.ts", text)).to.deep.equal([
      { key: "x/sample.ts › over", lines: MAX_LINES + 1 },
    ]);
  });
});
