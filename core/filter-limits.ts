import type { RE2JS } from "re2js";

// Write-time limits of payload filters, besides their size (16 KiB) and depth (32):
// what a filter may ask of the matcher. They keep what can be stored cheap to
// compile and, under the step budget (filter-budget.ts), useful: a stored filter
// past them (written before they existed, or by SQL) still runs, under the same
// budget. Chosen from bench/delivery/filter-bounds.ts (docs/webhooks/security.md).

/** Characters of one $regex pattern. */
export const MAX_REGEX_CHARS = 256;
/** Largest count of a counted repetition ({n}, {n,}, {n,m}); RE2 itself takes up to 1 000. */
export const MAX_REGEX_REPEAT = 100;
/** RE2 instructions of one compiled pattern: the cost per character of text it is matched on. */
export const MAX_REGEX_PROGRAM = 1_000;
/** $regex operators in one filter. */
export const MAX_REGEXES = 10;
/** Values of one $in, $nin or $all list. */
export const MAX_LIST_VALUES = 256;

/**
 * The largest count of a counted repetition in a pattern, read from its text: a
 * `{` after a backslash or inside a character class is a literal, as is one not
 * followed by `n}`, `n,}` or `n,m}` (RE2's own reading).
 */
export function largestRepeat(pattern: string): number {
  let largest = 0;
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "\\" && pattern[i + 1] === "Q") {
      // \Q...\E quotes literally.
      const end = pattern.indexOf("\\E", i + 2);
      i = end < 0 ? pattern.length : end + 1;
    } else if (c === "\\") {
      i++;
    } else if (inClass) {
      if (c === "]") inClass = false;
    } else if (c === "[") {
      inClass = true;
      // A `]` first in the class (or after `^`) is a literal.
      if (pattern[i + 1] === "^") i++;
      if (pattern[i + 1] === "]") i++;
    } else if (c === "{") {
      const m = /^\{(\d+)(?:,(\d*))?\}/.exec(pattern.slice(i, i + 24));
      if (m) largest = Math.max(largest, Number(m[1]), m[2] ? Number(m[2]) : 0);
    }
  }
  return largest;
}

/** What of the pattern limits a pattern exceeds, said for an error message; null when none. */
export function patternOverLimits(pattern: string): string | null {
  if (pattern.length > MAX_REGEX_CHARS)
    return `is ${pattern.length} characters long; a pattern may have at most ${MAX_REGEX_CHARS}`;
  const repeat = largestRepeat(pattern);
  if (repeat > MAX_REGEX_REPEAT)
    return `repeats ${repeat} times ({${repeat}}); a counted repetition may count at most ${MAX_REGEX_REPEAT}`;
  return null;
}

/** Instructions of a compiled pattern's program (re2js keeps it on the compiled expression). */
export function programSize(re: RE2JS): number {
  return (re as unknown as { re2Input: { prog: { numInst(): number } } }).re2Input.prog.numInst();
}
