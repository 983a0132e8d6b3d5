import type pg from "pg";

/**
 * Warnings about a config's subscriptions against the event catalog, returned next to
 * the config it was written as (`{"data": …, "warnings": […]}`); the write itself is
 * never refused. Nothing while the catalog is empty: a deployment that does not keep
 * one gets the responses it always got. Otherwise a subscription warns when it names a
 * type outside the catalog (a typo, or a type nobody emits), when its wildcard covers
 * no type in it, or when everything it covers is deprecated.
 */
export async function subscriptionWarnings(pool: pg.Pool, eventTypes: string[]): Promise<string[]> {
  const exact = eventTypes.filter((t) => !t.endsWith(".*"));
  const prefixes = eventTypes.filter((t) => t.endsWith(".*")).map((t) => t.slice(0, -1));
  // One read: the catalog's types these subscriptions cover, and whether it has any type at all.
  const { rows } = await pool.query<{ name: string | null; deprecated: boolean | null }>({
    name: "event-types-covered",
    text: `SELECT name, deprecated FROM event_types
        WHERE name = ANY($1::text[]) OR EXISTS (SELECT 1 FROM unnest($2::text[]) p WHERE starts_with(name, p))
      UNION ALL
      SELECT NULL, NULL WHERE EXISTS (SELECT 1 FROM event_types)`,
    values: [exact, prefixes],
  });
  if (rows.length === 0) return [];
  const covered = rows.filter((r): r is { name: string; deprecated: boolean } => r.name !== null);
  const warnings: string[] = [];
  for (const t of eventTypes) {
    if (!t.endsWith(".*")) {
      const hit = covered.find((r) => r.name === t);
      if (!hit) warnings.push(`eventTypes: "${t}" is not in the event catalog (GET /event-types)`);
      else if (hit.deprecated) warnings.push(`eventTypes: "${t}" is deprecated in the event catalog`);
      continue;
    }
    const under = covered.filter((r) => r.name.startsWith(t.slice(0, -1)));
    if (under.length === 0) warnings.push(`eventTypes: "${t}" matches no type in the event catalog`);
    else if (under.every((r) => r.deprecated))
      warnings.push(`eventTypes: "${t}" matches only deprecated types in the event catalog`);
  }
  return warnings;
}
