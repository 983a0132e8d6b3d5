import type { ConfigSecrets } from "../core/config-secrets.js";
import { configWriteCheck } from "./config-writes.js";
import type { WriteCheck } from "./server/actions.js";
import type { Row } from "./server/entity-manager.js";
import type { EntityServer } from "./server/server.js";

/** Field names that are secrets wherever they appear, nested JSON included. */
export const SECRET_FIELDS = ["secret", "previousSecret", "previous_secret"] as const;

/** The product's own tables as entity-server aliases. */
export const PRODUCT_ALIASES: Record<
  string,
  { model: string; hidden: string[]; writeCheck?: (secrets: ConfigSecrets) => WriteCheck }
> = {
  // Config writes pass the webhooks API's validation and sealing (entity/config-writes.ts).
  config: { model: "Config", hidden: ["secret", "previousSecret"], writeCheck: configWriteCheck },
  attempt: { model: "Attempt", hidden: [] },
};

/**
 * Binds the product tables: read-only unless named in `writable`. Secrets are
 * never rendered: hidden at the top level, and removed from nested JSON
 * (an attempt's config snapshot). A writable config alias seals the secrets it
 * writes with `secrets` (the webhooks service's key ring, or none with
 * --insecure-plaintext-secrets), so it needs them.
 */
export function bindProductTables(
  server: EntityServer,
  writable: readonly string[] = [],
  secrets?: ConfigSecrets,
): void {
  for (const name of writable) {
    if (!Object.hasOwn(PRODUCT_ALIASES, name)) {
      throw new Error(
        `unknown alias "${name}" in --writable (aliases: ${Object.keys(PRODUCT_ALIASES).join(", ")})`,
      );
    }
    if (PRODUCT_ALIASES[name]!.writeCheck && !secrets)
      throw new Error(
        `--writable ${name} stores signing secrets, sealed as the webhooks service seals them: pass its key file with ` +
          "--secrets-key-file FILE (or SECRETS_KEY_FILE), or --insecure-plaintext-secrets if it runs with that too",
      );
  }
  for (const [alias, spec] of Object.entries(PRODUCT_ALIASES)) {
    const readOnly = !writable.includes(alias);
    server.setEntityAlias(spec.model, alias, {
      hidden: [...spec.hidden],
      readOnly,
      present: redactSecrets,
      ...(!readOnly && spec.writeCheck && secrets ? { checkWrite: spec.writeCheck(secrets) } : {}),
    });
  }
}

/** A copy of the row without secret keys at any depth. */
export function redactSecrets(row: Row): Row {
  return redact(row) as Row;
}

const SECRET_KEYS: ReadonlySet<string> = new Set(SECRET_FIELDS);

/** The value itself when it holds no secret key: only what changes is copied (this runs on every rendered row). */
function redact(value: unknown): unknown {
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const next = redact(value[i]);
      if (next !== value[i]) {
        out ??= value.slice();
        out[i] = next;
      }
    }
    return out ?? value;
  }
  if (value === null || typeof value !== "object" || Object.getPrototypeOf(value) !== Object.prototype)
    return value;
  const obj = value as Record<string, unknown>;
  let out: Record<string, unknown> | undefined;
  for (const key of Object.keys(obj)) {
    if (SECRET_KEYS.has(key)) {
      out ??= { ...obj };
      delete out[key];
      continue;
    }
    const v = obj[key];
    const next = redact(v);
    if (next !== v) {
      out ??= { ...obj };
      out[key] = next;
    }
  }
  return out ?? value;
}
