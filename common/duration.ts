// Go-style durations ("300ms", "1m30s", "720h"), as the specified flags and
// environment variables use them (docs/spec-rules.md#durations). Values are milliseconds.

const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

const PART = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/y;

/** Parses a Go duration; throws with the offending text when it is not one. */
export function parseDuration(text: string): number {
  const input = text.trim();
  if (input === "0") return 0;
  let sign = 1;
  let pos = 0;
  if (input[0] === "-" || input[0] === "+") {
    sign = input[0] === "-" ? -1 : 1;
    pos = 1;
  }
  if (pos >= input.length) throw new Error(`invalid duration "${text}"`);
  let total = 0;
  while (pos < input.length) {
    PART.lastIndex = pos;
    const m = PART.exec(input);
    if (!m) {
      throw new Error(
        `invalid duration "${text}": expected a number followed by a unit (ns, us, ms, s, m, h)`,
      );
    }
    total += Number(m[1]) * UNIT_MS[m[2]!]!;
    pos = PART.lastIndex;
  }
  return sign * total;
}

/** Formats milliseconds the way Go prints a duration ("1h0m0s", "1.5s", "300ms"). */
export function formatDuration(ms: number): string {
  if (ms === 0) return "0s";
  const sign = ms < 0 ? "-" : "";
  let rest = Math.abs(ms);
  if (rest < 1000) return `${sign}${rest}ms`;
  const h = Math.floor(rest / 3_600_000);
  rest -= h * 3_600_000;
  const m = Math.floor(rest / 60_000);
  rest -= m * 60_000;
  const s = `${Number((rest / 1000).toFixed(3))}s`;
  if (h) return `${sign}${h}h${m}m${s}`;
  if (m) return `${sign}${m}m${s}`;
  return sign + s;
}
