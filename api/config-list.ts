import type pg from "pg";

const iso = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * The unpaged list (the reference contract returns every config) rendered as
 * JSON by PostgreSQL in one row: 10 000 configs cost one query and one string
 * instead of 10 000 objects built and serialised here. Same fields as
 * configJson (absent previousSecretExpiresAt once the overlap ended).
 */
const ALL_CONFIGS_JSON = `(SELECT coalesce(json_agg(json_strip_nulls(json_build_object(
    'id', id, 'name', name, 'endpoint', endpoint, 'eventTypes', event_types, 'secret', secret,
    'previousSecretExpiresAt',
      CASE WHEN previous_secret_expires_at > now() THEN ${iso("previous_secret_expires_at")} END,
    'active', active, 'createdAt', ${iso("created_at")}, 'updatedAt', ${iso("updated_at")}))
  ORDER BY updated_at DESC, id DESC), '[]')::text FROM configs)`;

/** When the rendering changes without a write: the next end of a secret overlap (epoch ms). */
const NEXT_EXPIRY = `(SELECT extract(epoch FROM min(previous_secret_expires_at)) * 1000
  FROM configs WHERE previous_secret_expires_at > now())::float8`;

export interface RenderedList {
  /** The body of `GET /configs` without filters or paging. */
  body: string;
  /** config_list_version of the same snapshot; absent when rendered without it. */
  version?: string;
  /** The rendering is stale from this database time on (epoch ms), null when no overlap runs. */
  staleAt: number | null;
}

const wrap = (data: string) => `{"cursor":{"hasMore":false,"data":${data}}}`;

/**
 * Renders every config with the list version they belong to: one statement, so
 * one snapshot, so the version names exactly the writes the body contains.
 */
export async function renderVersionedList(pool: pg.Pool): Promise<RenderedList> {
  const { rows } = await pool.query<{ version: string; stale_at: number | null; data: string }>({
    name: "configs-render-versioned",
    text: `SELECT (SELECT version::text FROM config_list_version) AS version,
      ${NEXT_EXPIRY} AS stale_at, ${ALL_CONFIGS_JSON} AS data`,
  });
  const row = rows[0]!;
  return { body: wrap(row.data), version: row.version, staleAt: row.stale_at };
}

/** Renders every config without the version (the fallback when the version cannot be read). */
export async function renderList(pool: pg.Pool): Promise<RenderedList> {
  const { rows } = await pool.query<{ stale_at: number | null; data: string }>({
    name: "configs-render",
    text: `SELECT ${NEXT_EXPIRY} AS stale_at, ${ALL_CONFIGS_JSON} AS data`,
  });
  return { body: wrap(rows[0]!.data), staleAt: rows[0]!.stale_at };
}
