// Applying a matching override onto the settings, with `inherit` none/append/prepend.
import { deepClone } from "./clone.js";
import type { InheritMode } from "./types.js";

type Table = Record<string, unknown>;
const isTable = (v: unknown): v is Table => typeof v === "object" && v !== null && !Array.isArray(v);

/** `inherit` append/prepend between values that are not two lists or two tables. */
export class InheritError extends Error {}

/** Combines an earlier value with an override's value. */
export function inheritJoin(old: unknown, value: unknown, mode: InheritMode): unknown {
  if (mode === "none" || old === undefined) return deepClone(value);
  if (Array.isArray(old) && Array.isArray(value)) {
    return mode === "append" ? [...old, ...value] : [...value, ...old];
  }
  if (isTable(old) && isTable(value)) {
    // append: the override wins on conflicts; prepend: the earlier value wins.
    return mode === "append" ? { ...old, ...value } : { ...value, ...old };
  }
  const kind = (v: unknown) => (Array.isArray(v) ? "a list" : isTable(v) ? "a table" : `a ${typeof v}`);
  throw new InheritError(
    `inherit = "${mode}" needs two lists or two tables, got ${kind(old)} and ${kind(value)}`,
  );
}

const NOT_SETTINGS = new Set(["if", "inherit", "fail"]);

/**
 * Applies one override in place. A table value (a section such as cmake) is applied key by key,
 * so `cmake.args` in an override leaves `cmake.define` alone, while each second-level value
 * replaces the earlier one unless `inherit` says append or prepend. Anything else is replaced.
 */
export function applyOverride(
  settings: Table,
  override: Table,
  onError: (key: string, message: string) => void,
): void {
  const inherit = isTable(override.inherit) ? override.inherit : {};
  for (const [key, value] of Object.entries(override)) {
    if (NOT_SETTINGS.has(key)) continue;
    if (isTable(value)) {
      const target = isTable(settings[key]) ? (settings[key] as Table) : {};
      settings[key] = target;
      const modes = isTable(inherit[key]) ? (inherit[key] as Table) : {};
      for (const [sub, subValue] of Object.entries(value)) {
        const mode = (modes[sub] as InheritMode | undefined) ?? "none";
        try {
          target[sub] = inheritJoin(target[sub], subValue, mode);
        } catch (err) {
          if (!(err instanceof InheritError)) throw err;
          onError(`${key}.${sub}`, err.message);
        }
      }
    } else {
      settings[key] = deepClone(value);
    }
  }
}
