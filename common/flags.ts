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

export function positiveIntArg(value: string): number {
  if (!/^\d+$/.test(value.trim()) || Number(value) < 1) {
    throw new InvalidArgumentError(`expected a positive integer, got "${value}"`);
  }
  return Number(value);
}

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
