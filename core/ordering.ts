import { createHash } from "node:crypto";

// Ordered delivery (docs/webhooks/ordering-and-batching.md#ordered-delivery): what a config's `ordering` column holds
// and how an event's ordering key names the workflow that delivers its key in order.

export type OrderingFailure = "skip" | "block";

/** A config's ordering as stored (null in the column when the config is unordered). */
export interface Ordering {
  enabled: true;
  onFailure: OrderingFailure;
}

/** Longest `ordering_key` an event may carry (in characters). */
export const MAX_ORDERING_KEY_LENGTH = 256;

/** The config's ordering when it delivers in order, else null (whatever the column holds). */
export function orderingOf(config: { ordering?: unknown }): Ordering | null {
  const o = config.ordering as Partial<Ordering> | null | undefined;
  if (!o?.enabled) return null;
  return { enabled: true, onFailure: o.onFailure === "block" ? "block" : "skip" };
}

/** What the API stores for its `ordering` field: null turns ordering off. */
export function storedOrdering(o: { enabled: boolean; onFailure?: OrderingFailure } | null): Ordering | null {
  return o?.enabled ? { enabled: true, onFailure: o.onFailure ?? "skip" } : null;
}

/** The event's ordering key for a config: its `ordering_key`, else the config id (the whole endpoint in order). */
export const orderingKeyOf = (configId: string, orderingKey: string | undefined): string =>
  orderingKey ?? configId;

/**
 * The workflow id of one (config, key): the key as it is when short and plain, else a
 * hash of it, so any key fits Temporal's id limits and keeps one workflow.
 */
export function orderedWorkflowId(configId: string, key: string): string {
  const plain = key.length <= 100 && /^[\w.:@-]+$/.test(key);
  const part = plain ? key : `sha256-${createHash("sha256").update(key).digest("hex").slice(0, 32)}`;
  return `ordered:${configId}:${part}`;
}
