import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fromRoot } from "../../common/paths.js";
import { runCommand } from "../support/process.js";

// What the client packages' tests share: the tools, a clean folder to install a package
// into, and commands whose failure shows their whole output.

/** The generator's and wheel builder's venv and the test wheels (scripts/client-tools.sh). */
export const TOOLS_VENV = fromRoot(".tools/client-tools-venv");
export const TEST_WHEELS = fromRoot(".tools/client-wheels");
export { SIGNATURE_VECTORS as TEST_VECTORS } from "../support/signature-vectors.js";

/**
 * Makes sure of the tools (idempotent, about a second when they are there): setup installs
 * them for `npm test`, but `npm run test:fast` and a single file run without setup.
 */
export const ensureClientTools = (): Promise<string> =>
  run("bash", [fromRoot("scripts/client-tools.sh")], fromRoot("."));

/** A new empty folder under the system's temporary folder. */
export const cleanFolder = (name: string): Promise<string> => mkdtemp(path.join(tmpdir(), `${name}-`));

/** Runs `file` in `cwd` to its end; throws with its output when it fails. Returns stdout. */
export async function run(
  file: string,
  args: string[],
  cwd: string,
  env: Record<string, string> = {},
): Promise<string> {
  const result = await runCommand({ file, cwd }, args, env);
  if (result.code !== 0)
    throw new Error(
      `${[file, ...args].join(" ")} (in ${cwd}) exited ${result.code}:\n${result.stdout}\n${result.stderr}`,
    );
  return result.stdout;
}
