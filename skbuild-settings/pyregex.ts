// Regular expressions of override conditions are written for Python's `re.search`. We run them
// with JavaScript's RegExp after rewriting the Python-only spellings that have a JavaScript
// equivalent; anything else that JavaScript cannot compile is reported as a syntax error.

export interface CompiledRegex {
  regex?: RegExp;
  error?: string;
}

const cache = new Map<string, CompiledRegex>();

const INLINE_FLAGS = /^\(\?([aiLmsux]+)\)/;

/** Compiles a Python-style pattern (cached). */
export function compilePythonRegex(pattern: string): CompiledRegex {
  const hit = cache.get(pattern);
  if (hit) return hit;
  const result = translate(pattern);
  if (cache.size > 10_000) cache.clear();
  cache.set(pattern, result);
  return result;
}

function translate(pattern: string): CompiledRegex {
  let source = pattern;
  let flags = "";
  const inline = INLINE_FLAGS.exec(source);
  if (inline) {
    source = source.slice(inline[0].length);
    for (const f of inline[1]!) {
      if (f === "i" || f === "m" || f === "s") flags += flags.includes(f) ? "" : f;
      else if (f === "x")
        return { error: "verbose mode (?x) is not supported; write the pattern without it" };
      // a, L, u only change character classes for bytes/locale; Python's str default is Unicode.
    }
  }
  source = source
    .replace(/\(\?P<([A-Za-z_][A-Za-z0-9_]*)>/g, "(?<$1>")
    .replace(/\(\?P=([A-Za-z_][A-Za-z0-9_]*)\)/g, "\\k<$1>")
    .replace(/\\A/g, "^")
    .replace(/\\Z/g, "$(?![\\s\\S])");
  try {
    return { regex: new RegExp(source, flags) };
  } catch (err) {
    const message = (err as Error).message.replace(/^Invalid regular expression: /, "");
    return { error: message };
  }
}

/** Python's re.search(pattern, text) is not None. */
export function regexSearch(pattern: string, text: string): boolean {
  const { regex } = compilePythonRegex(pattern);
  return regex ? regex.test(text) : false;
}
