import { InvalidArgumentError } from "commander";
import { parseDuration } from "./duration.js";

// Argument parsers for commander options. Commander prefixes the thrown
// message with the option name, so every bad value names its flag.

export function durationArg(value: string): number {
  try {
    return parseDuration(value);
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message);
  }
}

export function positiveDurationArg(value: string): number {
  const ms = durationArg(value);
  if (ms <= 0) throw new InvalidArgumentError(`expected a positive duration such as "3s", got "${value}"`);
  return ms;
}

export function nonNegativeDurationArg(value: string): number {
  const ms = durationArg(value);
  if (ms < 0)
    throw new InvalidArgumentError(`expected 0 or a positive duration such as "3s", got "${value}"`);
  return ms;
}

/**
 * A boolean option that an environment variable may set: `--flag` alone is true, and
 * `--flag false` or `VAR=false`/`0` is false (commander alone takes any value of the
 * variable, "false" included, as true). Use with `.preset("true").default(false)`.
 */
export function boolArg(value: string): boolean {
  const v = value.trim().toLowerCase();
  if (["1", "t", "true", "yes", "on"].includes(v)) return true;
  if (["0", "f", "false", "no", "off", ""].includes(v)) return false;
  throw new InvalidArgumentError(`expected true or false, got "${value}"`);
}

/** A share from 0 to 1 ("0.25"). */
export function rateArg(value: string): number {
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n) || n < 0 || n > 1)
    throw new InvalidArgumentError(`expected a number from 0 to 1, got "${value}"`);
  return n;
}

/** Comma-separated positive durations ("5s,30s,2m"), in milliseconds. */
export function durationListArg(value: string): number[] {
  const parts = value.split(",").map((s) => s.trim());
  if (parts.some((p) => p === "")) {
    throw new InvalidArgumentError(
      `expected durations separated by commas such as "5s,30s,2m", got "${value}"`,
    );
  }
  return parts.map(positiveDurationArg);
}

const BYTE_UNITS: Record<string, number> = {
  "": 1,
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
  kib: 2 ** 10,
  mib: 2 ** 20,
  gib: 2 ** 30,
  tib: 2 ** 40,
};

/** A size in bytes: "1073741824", "512MB" (powers of 1000) or "1GiB" (powers of 1024). */
export function bytesArg(value: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(value.trim());
  const unit = m ? BYTE_UNITS[m[2]!.toLowerCase()] : undefined;
  if (!m || unit === undefined) {
    throw new InvalidArgumentError(
      `expected a size such as "1GiB", "512MB" or a number of bytes, got "${value}"`,
    );
  }
  return Math.round(Number(m[1]) * unit);
}

export function nonNegativeIntArg(value: string): number {
  if (!/^\d+$/.test(value.trim()))
    throw new InvalidArgumentError(`expected 0 or a positive integer, got "${value}"`);
  return Number(value);
}

export function positiveIntArg(value: string): number {
  if (!/^\d+$/.test(value.trim()) || Number(value) < 1) {
    throw new InvalidArgumentError(`expected a positive integer, got "${value}"`);
  }
  return Number(value);
}

/** A positive integer of at most `max` (the error names the bound). */
export const boundedIntArg =
  (max: number, why: string) =>
  (value: string): number => {
    const n = positiveIntArg(value);
    if (n > max) throw new InvalidArgumentError(`at most ${max} (${why}), got "${value}"`);
    return n;
  };

/**
 * A comma-separated, repeatable list option (`--x a,b --x c` gives [a, b, c])
 * whose default is replaced, not extended, by the first value given.
 */
export function listOption(defaults: string[]): {
  defaults: string[];
  parse: (v: string, prev: string[]) => string[];
} {
  return {
    defaults,
    parse: (value, previous) => listArg(value, previous === defaults ? undefined : previous),
  };
}

/** Comma-separated list, repeatable: `--x a,b --x c` gives [a, b, c]. */
export function listArg(value: string, previous: string[] | undefined): string[] {
  const items = value
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (items.length === 0) throw new InvalidArgumentError("expected at least one value");
  return [...(previous ?? []), ...items];
}

export interface ListenAddress {
  host: string;
  port: number;
}

/** Go-style listen address: ":8080", "127.0.0.1:8080", "[::1]:8080". */
export function listenArg(value: string): ListenAddress {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(value.trim());
  const port = m ? Number(m[3]) : Number.NaN;
  if (!m || port > 65535) {
    throw new InvalidArgumentError(`expected HOST:PORT or :PORT (e.g. ":8080"), got "${value}"`);
  }
  return { host: m[1] ?? (m[2] || "0.0.0.0"), port };
}
