import { createHash } from "node:crypto";
import { assertNoDuplicateKeys, decodeUtf8, unstorableJson } from "../common/strict-text.js";
import { normalizeEventType } from "./event-types.js";
import { MAX_ORDERING_KEY_LENGTH } from "./ordering.js";

/** The event message as published on the broker, after normalisation. */
export interface EventMessage {
  idempotency_key: string;
  date: string;
  app: string;
  version: string;
  /** Normalised: lower(app) + "." + lower(type), or lower(type) without an app. */
  type: string;
  payload: unknown;
  /**
   * The tenant the event is for (its id or uid), when it names one: it matches only that
   * tenant's configs, and without it only the default tenant's. Not part of the body sent.
   */
  tenant?: string;
  /**
   * Orders the event among its key's (docs/webhooks/ordering-and-batching.md#ordered-delivery): an ordered config
   * delivers one key's events one at a time. Part of the body sent.
   */
  ordering_key?: string;
}

/** Why a message is not an event message and can never be delivered (it goes to the dead-letter store). */
export class UnparsableMessage extends Error {}

const isString = (v: unknown): v is string => typeof v === "string";

/**
 * Parses a broker payload as an event message and normalises it: the type
 * becomes lower(app) + "." + lower(type); unknown top-level fields are dropped
 * and the field order fixed, so the body sent to endpoints is stable.
 *
 * The text rules are POST /events' (common/strict-text.ts): UTF-8 only, no
 * duplicate key, no NUL or lone surrogate anywhere. Text breaking them would be
 * altered on its way (U+FFFD in place of the bytes) or refused by PostgreSQL
 * halfway through the start path, where it looked like a failure that may pass.
 */
export function parseEventMessage(data: Uint8Array): EventMessage {
  let text: string;
  let raw: unknown;
  try {
    text = decodeUtf8(Buffer.from(data.buffer, data.byteOffset, data.byteLength), "the message");
  } catch (err) {
    throw new UnparsableMessage((err as Error).message);
  }
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new UnparsableMessage(`not JSON: ${(err as Error).message}`);
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new UnparsableMessage("not a JSON object");
  }
  try {
    // Any depth: how deep an event may nest is judged once it is parsed (MAX_EVENT_DEPTH,
    // start-limits.ts), and its dead letter then says which event it was.
    assertNoDuplicateKeys(text, Number.POSITIVE_INFINITY);
  } catch (err) {
    throw new UnparsableMessage((err as Error).message);
  }
  const problem = unstorableJson(text, raw);
  if (problem) throw new UnparsableMessage(problem);
  const m = raw as Record<string, unknown>;
  if (!isString(m.type) || m.type.trim() === "") throw new UnparsableMessage('missing string field "type"');
  if (m.tenant !== undefined && m.tenant !== null && (!isString(m.tenant) || m.tenant.trim() === "")) {
    throw new UnparsableMessage('field "tenant" must be a non-empty string (a tenant id or uid)');
  }
  if (
    m.ordering_key !== undefined &&
    m.ordering_key !== null &&
    (!isString(m.ordering_key) || m.ordering_key === "" || m.ordering_key.length > MAX_ORDERING_KEY_LENGTH)
  ) {
    throw new UnparsableMessage(
      `field "ordering_key" must be a non-empty string of at most ${MAX_ORDERING_KEY_LENGTH} characters`,
    );
  }
  for (const field of ["app", "idempotency_key", "date", "version"]) {
    if (m[field] !== undefined && m[field] !== null && !isString(m[field])) {
      throw new UnparsableMessage(`field "${field}" must be a string`);
    }
  }
  return {
    idempotency_key: (m.idempotency_key as string | undefined) ?? "",
    date: (m.date as string | undefined) ?? "",
    app: (m.app as string | undefined) ?? "",
    version: (m.version as string | undefined) ?? "",
    type: normalizeEventType((m.app as string | undefined) || undefined, m.type.trim()),
    payload: m.payload ?? null,
    ...(isString(m.ordering_key) ? { ordering_key: m.ordering_key } : {}),
    ...(isString(m.tenant) ? { tenant: m.tenant.trim() } : {}),
  };
}

/**
 * The delivery's key within a config: the idempotency key when it is short and
 * plain, else a hash of it (or of the message when it has none).
 */
export function deliveryKey(idempotencyKey: string, data: Uint8Array): string {
  const ik = idempotencyKey;
  if (ik && ik.length <= 100 && /^[\w.:@-]+$/.test(ik)) return ik;
  return `sha256-${createHash("sha256")
    .update(ik || data)
    .digest("hex")
    .slice(0, 32)}`;
}

/** A UUID derived from the workflow id, so a webhook id is as deterministic as its workflow. */
export function webhookIdFor(workflowId: string): string {
  const h = createHash("sha256").update(workflowId).digest();
  h[6] = (h[6]! & 0x0f) | 0x50; // version 5 layout (name-based, SHA)
  h[8] = (h[8]! & 0x3f) | 0x80;
  const hex = h.subarray(0, 16).toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
