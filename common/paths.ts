import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root: the nearest folder above this module holding package.json (works from dist/ too). */
export const repoRoot: string = (() => {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, "package.json"))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`package.json not found above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
  return dir;
})();

/** A path inside the repository. */
export const fromRoot = (...parts: string[]): string => path.join(repoRoot, ...parts);
