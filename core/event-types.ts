// Event types and subscriptions. A type is `<app>.<type>`, lower case. A
// subscription is either an exact type or a wildcard ending in `.*`, which
// matches every type under that dotted prefix: `ledger.*` matches
// `ledger.committed_transactions` and `ledger.v2.saved`, not `ledger` itself
// nor `ledgers.x`.

/** A subscription as stored: trimmed and lower-cased (the OpenAPI schema checks its form). */
export const normalizeSubscription = (entry: string): string => entry.trim().toLowerCase();

/** The broker's type normalised: lower(app) + "." + lower(type), or lower(type) without an app. */
export function normalizeEventType(app: string | undefined, type: string): string {
  return app ? `${app.toLowerCase()}.${type.toLowerCase()}` : type.toLowerCase();
}

/**
 * Every subscription value that matches `type`: the type itself and one
 * wildcard per dotted prefix. A config matches when its event types overlap
 * this list, which an indexed array-overlap query answers.
 */
export function subscriptionsMatching(type: string): string[] {
  const parts = type.split(".");
  const patterns = [type];
  for (let i = 1; i < parts.length; i++) patterns.push(`${parts.slice(0, i).join(".")}.*`);
  return patterns;
}
