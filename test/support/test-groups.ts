import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";

// Which test files need a running service, and which carry a tag, read from the test
// sources themselves, so that no mocha config keeps a list of paths by hand (files move
// and appear in parallel branches). The mocha configs call `selectTests`:
// `.mocharc.fast.cjs` (npm run test:fast) takes the service-free files,
// `.mocharc.temporal-server.cjs` a folder plus the files tagged @temporal-server or
// @temporal-server-only, and `.mocharc.cjs` (the main suite) every other file but those
// tagged @temporal-server-only, the ones tagged @long first.
//
// A tag is a line `// tags: @name @other …` (free text may follow the tags). A test-side
// module (under test/ or bench/) needs services when it carries @needs-services, imports
// a client of a shared service (SERVICE_CLIENTS), or imports a test-side module that
// needs services; product code is not followed (importing it starts nothing). Type-only
// imports count too: a file is put among the service tests when in doubt, never the
// other way round.

/** Packages whose import means talking to a shared service (PostgreSQL, NATS, Kafka, Redis, Temporal, Chromium, ElasticMQ). */
export const SERVICE_CLIENTS: ReadonlySet<string> = new Set([
  "pg",
  "@prisma/adapter-pg",
  "nats",
  "kafkajs",
  "ioredis",
  "@temporalio/client",
  "@temporalio/testing",
  "playwright-core",
  "@aws-sdk/client-sqs",
]);

export const NEEDS_SERVICES = "@needs-services";

/** Folders (relative to the root) whose modules are test-side code, followed through imports. */
const TEST_SIDE = ["test", "bench"];

export interface TestFile {
  /** The source, relative to the root: test/webhooks/delivery.test.ts. */
  source: string;
  /** What mocha runs, relative to the root: dist/test/webhooks/delivery.test.js. */
  compiled: string;
  tags: ReadonlySet<string>;
  /** Why the file needs services (the import chain to the first module that does), or undefined. */
  needsServices: string | undefined;
}

export interface Selection {
  /** Only files that need no running service (true) or only those that do (false). */
  serviceFree?: boolean;
  /** Folders under test/ (e.g. "production"), any of which admits a file. */
  folders?: readonly string[];
  /** Tags (e.g. "@temporal-server"), any of which admits a file. */
  tags?: readonly string[];
}

const TAG_LINE = /^\/\/ tags:((?:\s+@[a-z][a-z0-9-]*)+)/gm;
// Static imports and re-exports, side-effect imports, and dynamic imports with a literal.
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(?\s*)"([^"]+)"/g;

export function tagsOf(text: string): Set<string> {
  const tags = new Set<string>();
  for (const m of text.matchAll(TAG_LINE)) for (const tag of m[1]!.trim().split(/\s+/)) tags.add(tag);
  return tags;
}

export function specifiersOf(text: string): string[] {
  return [...text.matchAll(SPECIFIER)].map((m) => m[1]!);
}

/** The package a bare specifier names: "@scope/name/sub" → "@scope/name", "pg/lib" → "pg". */
const packageOf = (specifier: string) =>
  specifier
    .split("/")
    .slice(0, specifier.startsWith("@") ? 2 : 1)
    .join("/");

/**
 * Reads every `*.test.ts` under ROOT/test and decides which need services. `root` is the
 * repository (the sources are read, not dist/, which has no comments to carry tags).
 */
export function readTestFiles(root: string): TestFile[] {
  const reasons = new Map<string, string | undefined>();
  const visiting = new Set<string>();

  // Why the test-side module `rel` needs services, or undefined; memoised per module.
  const why = (rel: string): string | undefined => {
    if (reasons.has(rel)) return reasons.get(rel);
    if (visiting.has(rel)) return undefined; // a cycle adds nothing the first visit will not find
    visiting.add(rel);
    const text = readFileSync(path.join(root, rel), "utf8");
    let reason: string | undefined = tagsOf(text).has(NEEDS_SERVICES)
      ? `${rel} is tagged ${NEEDS_SERVICES}`
      : undefined;
    for (const spec of specifiersOf(text)) {
      if (reason) break;
      if (!spec.startsWith(".")) {
        if (SERVICE_CLIENTS.has(packageOf(spec))) reason = `${rel} imports ${packageOf(spec)}`;
        continue;
      }
      const target = testSideSource(root, rel, spec);
      const inner = target && why(target);
      if (inner) reason = `${rel} → ${inner}`;
    }
    visiting.delete(rel);
    reasons.set(rel, reason);
    return reason;
  };

  return testSources(root).map((source) => ({
    source,
    compiled: path.join("dist", source.replace(/\.ts$/, ".js")),
    tags: tagsOf(readFileSync(path.join(root, source), "utf8")),
    needsServices: why(source),
  }));
}

/** The compiled files (relative to root, sorted) that `selection` admits. */
export function selectTests(root: string, selection: Selection): string[] {
  return readTestFiles(root)
    .filter((f) => selection.serviceFree === undefined || selection.serviceFree === !f.needsServices)
    .filter((f) => (!selection.folders && !selection.tags) || inGroup(f, selection))
    .map((f) => f.compiled);
}

/** Whether `f` is under one of `group.folders` or carries one of `group.tags`. */
function inGroup(f: TestFile, group: Pick<Selection, "folders" | "tags">): boolean {
  return (
    (group.folders ?? []).some((d) => f.source.startsWith(`test/${d}/`)) ||
    (group.tags ?? []).some((t) => f.tags.has(t))
  );
}

export const LONG = "@long";
/** Run on the production Temporal server as well as in the main suite (on the dev server). */
export const TEMPORAL_SERVER = "@temporal-server";
/**
 * Run on the production Temporal server only: files whose subject is the server's own
 * behaviour (heartbeat timeouts, history sizes, task redistribution after a worker's loss),
 * which the production server is the better judge of, and which spend minutes waiting on it.
 */
export const TEMPORAL_SERVER_ONLY = "@temporal-server-only";

/**
 * Every compiled file but those under `except.folders` or carrying one of `except.tags`, in
 * the order a parallel run should start them: files tagged @long first (a long file
 * started last would end the run alone), then the other files needing services, then the
 * service-free ones, which are short and fill the workers' last minutes. Alphabetical
 * within each.
 */
export function parallelOrder(root: string, except: Pick<Selection, "folders" | "tags">): string[] {
  const files = readTestFiles(root).filter((f) => !inGroup(f, except));
  const rank = (f: TestFile) => (f.tags.has(LONG) ? 0 : f.needsServices ? 1 : 2);
  return files
    .map((f, i) => ({ f, i }))
    .sort((a, b) => rank(a.f) - rank(b.f) || a.i - b.i)
    .map(({ f }) => f.compiled);
}

/** The test-side source file a relative specifier of `from` names, or undefined (product code, assets). */
function testSideSource(root: string, from: string, specifier: string): string | undefined {
  const rel = path.normalize(path.join(path.dirname(from), specifier)).replace(/\.js$/, ".ts");
  if (!TEST_SIDE.some((dir) => rel.startsWith(`${dir}/`)) || !rel.endsWith(".ts")) return undefined;
  return existsSync(path.join(root, rel)) ? rel : undefined;
}

function testSources(root: string): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(rel);
      else if (entry.name.endsWith(".test.ts")) found.push(rel);
    }
  };
  walk("test");
  return found.sort();
}
