import { createHash } from "node:crypto";
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { bundleWorkflowCode, DefaultLogger, type WorkerOptions } from "@temporalio/worker";
import { createLogger, type Logger } from "../common/logger.js";

// The workflow code as one bundle, made once per build and kept under dist/: bundling it
// with webpack costs about 1.2 s (1.4-1.7 s of CPU) at every worker start otherwise, which
// every restart, every scaled-out worker and every test process paid again.
//
// A bundle is found by a hash of what could change it: the compiled code (every .js of
// dist/ but tests and benchmarks, by content), the SDK's version, the bundler plugins
// (--tracing adds its interceptors) and the entry (versioned workers bundle
// workflows/versioned.ts). A build that changes any of it makes a new bundle.
// A release carries its bundles without plugins (scripts/release.sh); where dist/ cannot be
// written (a read-only install), a worker that finds none bundles in memory. The hash of the
// plain bundle (no plugins, workflows/index.ts) is also the build's default Worker
// Versioning build id (workflowBuildId).

const DIST = dirname(dirname(fileURLToPath(import.meta.url)));
/** Folders of dist/ that are not code a workflow can import, and not in a release: left out of the hash. */
export const NOT_HASHED: ReadonlySet<string> = new Set(["test", "bench", "scripts", ".workflow-bundles"]);
/** Bundles of earlier builds are removed once this old (a process of that build may still be reading one). */
const STALE_MS = 60 * 60 * 1000;

type Plugins = NonNullable<WorkerOptions["plugins"]>;
/** The module a bundle starts from: workflows/index.ts, or workflows/versioned.ts (the same workflows with their versioning behaviours). */
export type BundleEntry = "index" | "versioned";

/** The compiled tree a bundle is made from, and the folder bundles are saved in. */
export interface BundlePlace {
  dist: string;
  bundles: string;
}

/** This build's own: dist/ and dist/.workflow-bundles (a test passes a copy of its own). */
const BUILT: BundlePlace = { dist: DIST, bundles: join(DIST, ".workflow-bundles") };

async function jsFiles(dist: string, dir = dist): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map(async (e) => {
      const path = join(dir, e.name);
      if (e.isDirectory()) return NOT_HASHED.has(e.name) && dir === dist ? [] : jsFiles(dist, path);
      return e.name.endsWith(".js") ? [path] : [];
    }),
  );
  return nested.flat();
}

/** The hash that names this build's bundle for these plugins and entry. */
async function bundleKey(dist: string, plugins: Plugins, entry: BundleEntry): Promise<string> {
  const hash = createHash("sha256");
  const sdk = createRequire(import.meta.url)("@temporalio/worker/package.json") as { version: string };
  hash.update(`sdk ${sdk.version}\nplugins ${plugins.map((p) => p.name).join(",")}\n`);
  // The plain entry adds nothing: its key, and so a release's build id, is what it was before entries.
  if (entry !== "index") hash.update(`entry ${entry}\n`);
  for (const file of (await jsFiles(dist)).sort()) {
    hash.update(`${relative(dist, file)}\n`);
    hash.update(await readFile(file));
  }
  return hash.digest("hex").slice(0, 32);
}

/** Removes other builds' bundles that no process of theirs can still be starting with. */
async function removeStale(bundles: string, keep: string): Promise<void> {
  for (const name of await readdir(bundles).catch(() => [] as string[])) {
    const path = join(bundles, name);
    if (name === keep) continue;
    const s = await stat(path).catch(() => undefined);
    if (s && Date.now() - s.mtimeMs > STALE_MS) await rm(path, { force: true });
  }
}

/**
 * The default build id of Worker Versioning (--worker-build-id): the hash naming the build's
 * plain bundle, so that every build whose code differs is a version of its own, and the
 * processes of one build agree without being told.
 */
export const workflowBuildId = (dist: string = DIST): Promise<string> => bundleKey(dist, [], "index");

/** The workflow bundle for these plugins: this build's saved one, or a new one (saved when it can be). */
export async function savedWorkflowBundle(
  logger: Logger,
  sdkLogger: DefaultLogger,
  plugins: Plugins,
  { dist, bundles }: BundlePlace = BUILT,
  entry: BundleEntry = "index",
): Promise<{ code: string }> {
  const key = await bundleKey(dist, plugins, entry);
  const path = join(bundles, `${key}.js`);
  const saved = await readFile(path, "utf8").catch(() => undefined);
  if (saved) return { code: saved };
  const started = Date.now();
  const { code } = await bundleWorkflowCode({
    workflowsPath: join(dist, "workflows", `${entry}.js`),
    logger: sdkLogger,
    plugins,
  });
  try {
    await mkdir(bundles, { recursive: true });
    // Written aside and renamed: a process starting meanwhile reads a whole bundle or none.
    const partial = `${path}.${process.pid}.partial`;
    await writeFile(partial, code);
    await rename(partial, path);
    await removeStale(bundles, `${key}.js`);
    logger.info({ ms: Date.now() - started, path }, "workflow code bundled and saved for later starts");
  } catch (err) {
    logger.info(
      { ms: Date.now() - started, err: (err as Error).message },
      "workflow code bundled; it could not be saved, so each start bundles it",
    );
  }
  return { code };
}

/**
 * For a release (scripts/release.sh): this build's bundles without plugins, plain and
 * versioned, saved in the release's bundle folder; returns the build id. The release's dist/
 * is this one less what the key leaves out, so its workers find the bundles under the same
 * keys; the bundler resolves the SDK from here.
 */
export async function prebuildWorkflowBundle(bundles: string): Promise<string> {
  const place = { dist: DIST, bundles };
  for (const entry of ["index", "versioned"] as const)
    await savedWorkflowBundle(createLogger("release"), new DefaultLogger("WARN"), [], place, entry);
  return workflowBuildId();
}
