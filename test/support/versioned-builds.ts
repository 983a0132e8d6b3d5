import { execFile } from "node:child_process";
import { copyFile, cp, mkdir, mkdtemp, readFile, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { fromRoot } from "../../common/paths.js";
import { NOT_HASHED } from "../../workers/workflow-bundle.js";
import type { Executable } from "./process.js";

// Two builds of the service side by side, for Worker Versioning tests: this tree's, and a
// copy of its compiled code with one change, run from its own bin/ as a second release
// would be. A copy is a build as a deployment sees one (its own files, hence its own bundle
// hash and build id) without compiling anything twice, and without a switch in the product
// that only tests would turn.

export interface CopiedBuild {
  root: string;
  /** The copy's dist/, for workflowBuildId. */
  dist: string;
  /** Its bin/webhooks, run in its root. */
  webhooks: Executable;
  remove(): Promise<void>;
}

/**
 * This tree's compiled code (less what NOT_HASHED leaves out of a build, tests included) with
 * `from` replaced by `to` in `file` (a path under dist/); `from` must occur there exactly once.
 */
export async function copyBuildWith(file: string, from: string, to: string): Promise<CopiedBuild> {
  const dist = fromRoot("dist");
  const root = await mkdtemp(path.join(tmpdir(), "webhooks-build-"));
  const copy = path.join(root, "dist");
  await cp(dist, copy, {
    recursive: true,
    filter: (src) => !NOT_HASHED.has(path.relative(dist, src).split(path.sep)[0]!),
  });
  // The copy's root is where its commands find package.json and their node_modules.
  await copyFile(fromRoot("package.json"), path.join(root, "package.json"));
  await symlink(await realpath(fromRoot("node_modules")), path.join(root, "node_modules"));
  await mkdir(path.join(root, "bin"));
  await copyFile(fromRoot("bin", "webhooks"), path.join(root, "bin", "webhooks"));
  const changed = path.join(copy, file);
  const text = await readFile(changed, "utf8");
  const found = text.split(from).length - 1;
  if (found !== 1) {
    await rm(root, { recursive: true, force: true });
    throw new Error(`${file} holds ${JSON.stringify(from)} ${found} times, expected once`);
  }
  await writeFile(changed, text.replace(from, to));
  return {
    root,
    dist: copy,
    webhooks: { file: path.join(root, "bin", "webhooks"), cwd: root },
    remove: () => rm(root, { recursive: true, force: true }),
  };
}

const run = promisify(execFile);

/** `scripts/rollout.sh COMMAND --deployment-name DEPLOYMENT ARGS…` against `address`; its stdout. */
export async function rollout(
  address: string,
  deployment: string,
  command: string,
  ...args: string[]
): Promise<string> {
  const script = fromRoot("scripts", "rollout.sh");
  try {
    const { stdout } = await run("bash", [script, command, "--deployment-name", deployment, ...args], {
      env: { ...process.env, TEMPORAL_ADDRESS: address },
      timeout: 180_000,
    });
    return stdout;
  } catch (err) {
    const e = err as Error & { stdout?: string; stderr?: string };
    throw new Error(`rollout.sh ${command} ${args.join(" ")} failed: ${e.message}\n${e.stdout}${e.stderr}`);
  }
}
