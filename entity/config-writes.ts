import { randomUUID } from "node:crypto";
import { generateSecret } from "../activities/secrets.js";
import { checkEndpoint } from "../api/config-routes.js";
import { ApiError } from "../api/errors.js";
import { check } from "../api/validation.js";
import type { ConfigSecrets } from "../core/config-secrets.js";
import { EgressPolicy } from "../core/egress-policy.js";
import { normalizeSubscription } from "../core/event-types.js";
import type { WriteCheck } from "./server/actions.js";
import type { Row } from "./server/entity-manager.js";
import { validationError } from "./server/errors.js";

// Writes of configs through the entity server pass the webhooks API's own
// validation (the ConfigUser schema of api/openapi.ts, checkEndpoint,
// normalizeSubscription), so the two paths cannot disagree about what a valid
// config is. The entity server has no --egress-* flags: endpoints are checked
// against the policy's defaults (always-denied ranges); a send is checked again
// against the worker's own policy when it resolves the address. A secret is sealed
// under the key ring before it is stored, as the API seals it (core/config-secrets.ts):
// the webhooks service opens it with the same key file.

/** Fields of ConfigUser: what a caller of the webhooks API writes. */
const USER_FIELDS = ["endpoint", "eventTypes", "secret", "name"] as const;
/** Written by the API itself; through the entity server only `active` (activate/deactivate). */
const CALLER_FIELDS = new Set<string>([...USER_FIELDS, "active"]);

const egress = new EgressPolicy({ denyPrivate: false, allow: [], deny: [] });

/** The write check of the config alias, sealing secrets with `secrets`. */
export const configWriteCheck =
  (secrets: ConfigSecrets): WriteCheck =>
  (data, stored) =>
    checkConfigWrite(data, secrets, stored);

/**
 * The data of an insert (no stored row) or update, checked as the webhooks
 * API checks a config: an update is checked as the config it would leave.
 * Fields the service maintains (id, timestamps, the rotated-out secret) may
 * be sent back unchanged (the entity client sends every field it holds), never set.
 */
export function checkConfigWrite(data: Row, secrets: ConfigSecrets, stored?: Row): Row {
  const out: Row = {};
  for (const [key, value] of Object.entries(data)) {
    if (CALLER_FIELDS.has(key)) continue;
    const unchanged = stored ? sameValue(value, stored[key]) : value === null;
    if (!unchanged) throw validationError(`${key} is maintained by the service and cannot be written`, key);
  }
  const config: Row = {};
  for (const key of USER_FIELDS) {
    // A stored secret is sealed; it was checked when it was written.
    const value = key in data ? data[key] : key === "secret" ? undefined : stored?.[key];
    if (value !== undefined && value !== null) config[key] = value;
  }
  try {
    check("ConfigUser", config);
    const endpoint = checkEndpoint(config.endpoint as string, egress);
    if ("endpoint" in data) out.endpoint = endpoint;
  } catch (err) {
    if (err instanceof ApiError) throw validationError(err.message, fieldOf(err.message));
    throw err;
  }
  if ("eventTypes" in data)
    out.eventTypes = [...new Set((config.eventTypes as string[]).map(normalizeSubscription))];
  if ("name" in data) out.name = data.name;
  if ("active" in data) out.active = data.active;
  // The id is chosen here on insert: a sealed secret is bound to its row.
  const id = stored ? String(stored.id) : randomUUID();
  if (!stored) out.id = id;
  if ("secret" in data) {
    out.secret = secrets.seal(id, "secret", String(data.secret));
    // As PUT /configs/{id}: a secret written by the caller ends any rotation overlap.
    if (stored) Object.assign(out, { previousSecret: null, previousSecretExpiresAt: null });
  } else if (!stored) out.secret = secrets.seal(id, "secret", generateSecret());
  return out;
}

function sameValue(a: unknown, b: unknown): boolean {
  if (a instanceof Date && b instanceof Date) return a.getTime() === b.getTime();
  return a === b || (a == null && b == null);
}

/** The field an API validation message starts with (`eventTypes[0] must be …`, `missing required field "endpoint"`). */
function fieldOf(message: string): string | undefined {
  return USER_FIELDS.find((f) => message.startsWith(f) || message.includes(`"${f}`));
}
