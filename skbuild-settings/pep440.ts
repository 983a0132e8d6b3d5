// PEP 440 versions and specifier sets, through @renovatebot/pep440 (a maintained implementation).
import pep440 from "@renovatebot/pep440";

// The library parses with large regular expressions on every call; settings repeat the same
// few strings, so answers are memoised (bounded).
function memo<T>(fn: (key: string) => T): (key: string) => T {
  const cache = new Map<string, T>();
  return (key) => {
    let hit = cache.get(key);
    if (hit === undefined && !cache.has(key)) {
      hit = fn(key);
      if (cache.size >= 5000) cache.clear();
      cache.set(key, hit);
    }
    return hit as T;
  };
}

const validVersion = memo((text) => pep440.valid(text.trim()) !== null);
const validSpecifier = memo((text) => pep440.validRange(text));

/** True when `text` is a PEP 440 version ("3.26.1", "0.10", "1.0rc1"). */
export function isVersion(text: string): boolean {
  return validVersion(text);
}

/** True when `text` is a specifier set (">=3.15", ">=3.10,<3.13", "~=1.5"); "" is the empty set. */
export function isSpecifierSet(text: string): boolean {
  return validSpecifier(text);
}

const satisfiesMemo = memo((key) => {
  const [version, specifierSet] = key.split("\u0000") as [string, string];
  if (!isVersion(version)) return false;
  return pep440.satisfies(version.trim(), specifierSet, { prereleases: true });
});

/**
 * Does `version` satisfy the specifier set? Pre-releases of the version are matched too: the
 * version is a fact about the build (a 3.14 beta interpreter is 3.14 for `>=3.13`), not a
 * candidate being picked from an index.
 */
export function satisfies(version: string, specifierSet: string): boolean {
  return satisfiesMemo(`${version}\u0000${specifierSet}`);
}

const lessThanMemo = memo((key) => {
  const [a, b] = key.split("\u0000") as [string, string];
  return pep440.lt(a.trim(), b.trim());
});

/** a < b for two valid versions. */
export function versionLessThan(a: string, b: string): boolean {
  return lessThanMemo(`${a}\u0000${b}`);
}

/** The least of some versions. */
export function minVersion(versions: string[]): string | undefined {
  let best: string | undefined;
  for (const v of versions) if (best === undefined || pep440.lt(v, best)) best = v;
  return best;
}
