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
// dist/ but tests and benchmarks, by content), the SDK's version and the bundler plugins
// (--tracing adds its interceptors). A build that changes any of it makes a new bundle.
// A release carries the bundle without plugins (scripts/release.sh); where dist/ cannot be
// written (a read-only install), a worker that finds none bundles in memory.

const WORKFLOWS_PATH = fileURLToPath(new URL("../workflows/index.js", import.meta.url));
const DIST = dirname(dirname(WORKFLOWS_PATH));
const BUNDLES = join(DIST, ".workflow-bundles");
/** Not code a workflow can import, and not in a release: left out of the hash. */
const SKIPPED = new Set(["test", "bench", "scripts", ".workflow-bundles"]);
/** Bundles of earlier builds are removed once this old (a process of that build may still be reading one). */
const STALE_MS = 60 * 60 * 1000;

type Plugins = NonNullable<WorkerOptions["plugins"]>;

async function jsFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map(async (e) => {
      const path = join(dir, e.name);
      if (e.isDirectory()) return SKIPPED.has(e.name) && dir === DIST ? [] : jsFiles(path);
      return e.name.endsWith(".js") ? [path] : [];
    }),
  );
  return nested.flat();
}

/** The hash that names this build's bundle for these plugins. */
async function bundleKey(plugins: Plugins): Promise<string> {
  const hash = createHash("sha256");
  const sdk = createRequire(import.meta.url)("@temporalio/worker/package.json") as { version: string };
  hash.update(`sdk ${sdk.version}\nplugins ${plugins.map((p) => p.name).join(",")}\n`);
  for (const file of (await jsFiles(DIST)).sort()) {
    hash.update(`${relative(DIST, file)}\n`);
    hash.update(await readFile(file));
  }
  return hash.digest("hex").slice(0, 32);
}

/** Removes other builds' bundles that no process of theirs can still be starting with. */
async function removeStale(keep: string): Promise<void> {
  for (const name of await readdir(BUNDLES).catch(() => [] as string[])) {
    const path = join(BUNDLES, name);
    if (name === keep) continue;
    const s = await stat(path).catch(() => undefined);
    if (s && Date.now() - s.mtimeMs > STALE_MS) await rm(path, { force: true });
  }
}

/** The workflow bundle for these plugins: this build's saved one, or a new one (saved when it can be). */
export async function savedWorkflowBundle(
  logger: Logger,
  sdkLogger: DefaultLogger,
  plugins: Plugins,
): Promise<{ code: string }> {
  const key = await bundleKey(plugins);
  const path = join(BUNDLES, `${key}.js`);
  const saved = await readFile(path, "utf8").catch(() => undefined);
  if (saved) return { code: saved };
  const started = Date.now();
  const { code } = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: sdkLogger, plugins });
  try {
    await mkdir(BUNDLES, { recursive: true });
    // Written aside and renamed: a process starting meanwhile reads a whole bundle or none.
    const partial = `${path}.${process.pid}.partial`;
    await writeFile(partial, code);
    await rename(partial, path);
    await removeStale(`${key}.js`);
    logger.info({ ms: Date.now() - started, path }, "workflow code bundled and saved for later starts");
  } catch (err) {
    logger.info(
      { ms: Date.now() - started, err: (err as Error).message },
      "workflow code bundled; it could not be saved, so each start bundles it",
    );
  }
  return { code };
}

/** For a release (scripts/release.sh): this build's bundle without plugins, saved under dist/. */
export async function prebuildWorkflowBundle(): Promise<void> {
  await savedWorkflowBundle(createLogger("release"), new DefaultLogger("WARN"), []);
}
