// "Did you mean" for misspelled keys and enum values. Similarity is the Ratcliff/Obershelp
// ratio (the measure Python's difflib uses, which the original backend's suggestions come from),
// with a cutoff of 0.6 and at most three suggestions.

/** Number of characters in matching blocks, found by recursively taking the longest common substring. */
function matchingCharacters(a: string, b: string): number {
  if (!a.length || !b.length) return 0;
  let best = 0;
  let bestA = 0;
  let bestB = 0;
  // lengths[j] = length of the common suffix of a[..i] and b[..j]
  let prev = new Array<number>(b.length + 1).fill(0);
  let cur = new Array<number>(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const len = a[i - 1] === b[j - 1] ? prev[j - 1]! + 1 : 0;
      cur[j] = len;
      if (len > best) {
        best = len;
        bestA = i - len;
        bestB = j - len;
      }
    }
    [prev, cur] = [cur, prev];
  }
  if (best === 0) return 0;
  return (
    best +
    matchingCharacters(a.slice(0, bestA), b.slice(0, bestB)) +
    matchingCharacters(a.slice(bestA + best), b.slice(bestB + best))
  );
}

/** Similarity in [0, 1]. */
export function similarity(a: string, b: string): number {
  const total = a.length + b.length;
  return total === 0 ? 1 : (2 * matchingCharacters(a, b)) / total;
}

const normalise = (s: string) => s.toLowerCase().replace(/_/g, "-");

/**
 * Up to `n` candidates close to `word`, best first. A candidate equal to the word once case and
 * underscores are ignored (platform_machine -> platform-machine) always comes first.
 */
export function closeMatches(word: string, candidates: Iterable<string>, n = 3, cutoff = 0.6): string[] {
  const scored: { c: string; score: number }[] = [];
  const w = normalise(word);
  for (const c of candidates) {
    if (c === word) continue;
    const score = normalise(c) === w ? 2 : similarity(w, normalise(c));
    if (score >= cutoff) scored.push({ c, score });
  }
  scored.sort((x, y) => y.score - x.score);
  return scored.slice(0, n).map((s) => s.c);
}
