import type pg from "pg";
import { MASKED_SECRET } from "./serialize.js";

const iso = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * One config as the list shows it, rendered by PostgreSQL: same fields as
 * configJson (absent previousSecretExpiresAt once the overlap ended). The
 * payload filter is appended after the nulls are stripped: they are stripped at
 * every depth, and a filter may compare with null.
 */
const CONFIG_JSON = (c: string) => `(CASE WHEN ${c}.filter IS NULL THEN ${STRIPPED(c)}
    ELSE (left(${STRIPPED(c)}::text, -1) || ',"filter":' || ${c}.filter::text || '}')::json END)`;

const STRIPPED = (c: string) => `json_strip_nulls(json_build_object(
    'id', ${c}.id, 'name', ${c}.name, 'endpoint', ${c}.endpoint, 'destination', ${c}.destination,
    'eventTypes', ${c}.event_types,
    'secret', '${MASKED_SECRET}',
    'previousSecretExpiresAt',
      CASE WHEN ${c}.previous_secret_expires_at > now() THEN ${iso(`${c}.previous_secret_expires_at`)} END,
    'active', ${c}.active, 'deactivatedReason', ${c}.deactivated_reason,
    'deactivatedAt', CASE WHEN ${c}.deactivated_at IS NOT NULL THEN ${iso(`${c}.deactivated_at`)} END,
    'createdAt', ${iso(`${c}.created_at`)}, 'updatedAt', ${iso(`${c}.updated_at`)}))`;

/** Where a config goes in the list (updated_at, then id, both descending), as one comparable string. */
const SORT_KEY = (c: string) => `${iso(`${c}.updated_at`)} || ${c}.id::text`;

/** When a config's rendering changes without a write: the end of its secret overlap (epoch ms). */
const EXPIRES = (c: string) =>
  `CASE WHEN ${c}.previous_secret_expires_at > now()
    THEN extract(epoch FROM ${c}.previous_secret_expires_at) * 1000 END::float8`;

/** The earliest such end over every config. */
const NEXT_EXPIRY = `(SELECT extract(epoch FROM min(previous_secret_expires_at)) * 1000
  FROM configs WHERE previous_secret_expires_at > now())::float8`;

const wrap = (data: string) => `{"cursor":{"hasMore":false,"data":${data}}}`;

/** The body of `GET /configs` without filters or paging around already rendered configs. */
export const listBody = (configs: readonly string[]) => wrap(`[${configs.join(",")}]`);

/**
 * The unpaged list (the reference contract returns every config) rendered in
 * one row, for when the list version cannot be read and nothing is cached.
 */
export async function renderList(pool: pg.Pool): Promise<{ body: string }> {
  const { rows } = await pool.query<{ data: string }>({
    name: "configs-render",
    text: `SELECT coalesce(json_agg(${CONFIG_JSON("c")} ORDER BY c.updated_at DESC, c.id DESC), '[]')::text AS data
      FROM configs c`,
  });
  return { body: wrap(rows[0]!.data) };
}

/** A config of the list, rendered, with what places it and what outdates it. */
export interface ListedConfig {
  id: string;
  sortKey: string;
  json: string;
  /** The end of its secret overlap (epoch ms), null when none runs. */
  expiresAt: number | null;
}

export interface ListSnapshot {
  /** config_list_version of the same snapshot. */
  version: string;
  /** In list order. */
  configs: ListedConfig[];
  /** The earliest end of a secret overlap (epoch ms), null when none runs. */
  staleAt: number | null;
}

interface ConfigRow {
  version: string;
  stale_at: number | null;
  id: string | null;
  sort_key: string | null;
  json: string | null;
  expires_at: number | null;
}

const listed = (r: ConfigRow): ListedConfig => ({
  id: r.id!,
  sortKey: r.sort_key!,
  json: r.json!,
  expiresAt: r.expires_at,
});

/**
 * Every config with the list version they belong to: one statement, so one
 * snapshot, so the version names exactly the writes the rows contain.
 */
export async function loadList(pool: pg.Pool): Promise<ListSnapshot> {
  const { rows } = await pool.query<ConfigRow>({
    name: "configs-list-snapshot",
    text: `SELECT v.version::text AS version, ${NEXT_EXPIRY} AS stale_at, c.id::text AS id,
        ${SORT_KEY("c")} AS sort_key, ${CONFIG_JSON("c")}::text AS json, ${EXPIRES("c")} AS expires_at
      FROM config_list_version v LEFT JOIN configs c ON true
      ORDER BY c.updated_at DESC, c.id DESC`,
  });
  if (!rows[0]) throw new Error("config_list_version has no row");
  return {
    version: rows[0].version,
    staleAt: rows[0].stale_at,
    configs: rows[0].id === null ? [] : rows.map(listed),
  };
}

export interface ListChanges {
  /** config_list_version of the same snapshot. */
  version: string;
  /** How many versions the changes cover; fewer than asked means some were pruned. */
  versions: number;
  /** False when a change names no config (TRUNCATE): only a full load is right then. */
  complete: boolean;
  /** Changed configs that exist now. */
  present: ListedConfig[];
  /** Changed configs that exist no more. */
  gone: string[];
}

/** The configs changed after `since`, as they are now, in one snapshot with the current version. */
export async function loadChanges(pool: pg.Pool, since: string): Promise<ListChanges> {
  const { rows } = await pool.query<ConfigRow & { changed: string | null; versions: number }>({
    name: "configs-list-changes",
    text: `WITH changed AS (SELECT version, config_id FROM config_list_changes WHERE version > $1::bigint)
      SELECT v.version::text AS version, (SELECT count(DISTINCT version)::int FROM changed) AS versions,
        ch.changed::text AS changed, c.id::text AS id, ${SORT_KEY("c")} AS sort_key,
        ${CONFIG_JSON("c")}::text AS json, ${EXPIRES("c")} AS expires_at
      FROM config_list_version v
      LEFT JOIN (SELECT DISTINCT config_id AS changed FROM changed) ch ON true
      LEFT JOIN configs c ON c.id = ch.changed`,
    values: [since],
  });
  if (!rows[0]) throw new Error("config_list_version has no row");
  const first = rows[0];
  const changes: ListChanges = {
    version: first.version,
    versions: first.versions,
    complete: true,
    present: [],
    gone: [],
  };
  // One row with neither a change nor a config: nothing changed.
  for (const r of rows) {
    if (r.changed === null) {
      if (first.versions > 0) changes.complete = false;
    } else if (r.id === null) changes.gone.push(r.changed);
    else changes.present.push(listed(r));
  }
  return changes;
}
