import { checkConfigWrite } from "./config-writes.js";
import type { WriteCheck } from "./server/actions.js";
import type { Row } from "./server/entity-manager.js";
import type { EntityServer } from "./server/server.js";

/** Field names that are secrets wherever they appear, nested JSON included. */
export const SECRET_FIELDS = ["secret", "previousSecret", "previous_secret"] as const;

/** The product's own tables as entity-server aliases. */
export const PRODUCT_ALIASES: Record<string, { model: string; hidden: string[]; checkWrite?: WriteCheck }> = {
  // Config writes pass the webhooks API's validation (entity/config-writes.ts).
  config: { model: "Config", hidden: ["secret", "previousSecret"], checkWrite: checkConfigWrite },
  attempt: { model: "Attempt", hidden: [] },
};

/**
 * Binds the product tables: read-only unless named in `writable`. Secrets are
 * never rendered: hidden at the top level, and removed from nested JSON
 * (an attempt's config snapshot).
 */
export function bindProductTables(server: EntityServer, writable: readonly string[] = []): void {
  for (const name of writable) {
    if (!Object.hasOwn(PRODUCT_ALIASES, name)) {
      throw new Error(
        `unknown alias "${name}" in --writable (aliases: ${Object.keys(PRODUCT_ALIASES).join(", ")})`,
      );
    }
  }
  for (const [alias, spec] of Object.entries(PRODUCT_ALIASES)) {
    server.setEntityAlias(spec.model, alias, {
      hidden: [...spec.hidden],
      readOnly: !writable.includes(alias),
      present: redactSecrets,
      ...(spec.checkWrite ? { checkWrite: spec.checkWrite } : {}),
    });
  }
}

/** A copy of the row without secret keys at any depth. */
export function redactSecrets(row: Row): Row {
  return redact(row) as Row;
}

function redact(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redact);
  if (value === null || typeof value !== "object" || Object.getPrototypeOf(value) !== Object.prototype)
    return value;
  let out: Record<string, unknown> | undefined;
  for (const [key, v] of Object.entries(value)) {
    const secret = (SECRET_FIELDS as readonly string[]).includes(key);
    const next = secret ? undefined : redact(v);
    if (secret || next !== v) out ??= { ...(value as Record<string, unknown>) };
    if (out) {
      if (secret) delete out[key];
      else out[key] = next;
    }
  }
  return out ?? value;
}
