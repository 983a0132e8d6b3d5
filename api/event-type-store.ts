import { randomUUID } from "node:crypto";
import type pg from "pg";

// The event catalog's rows, in plain SQL on Prisma's pool like the configs' (api/config-store.ts).

export interface EventTypeRow {
  name: string;
  description: string;
  /** Parsed from json: the schema as written (key order kept). */
  schema: unknown;
  example: unknown;
  deprecated: boolean;
  version: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface EventTypeWrite {
  description: string;
  /** null: no schema (any payload). */
  schema: unknown;
  /** null: no example. */
  example: unknown;
  deprecated: boolean;
}

const COLUMNS = `name, description, schema, example, deprecated, version::text AS version,
  created_at AS "createdAt", updated_at AS "updatedAt"`;

/** `null` and absent both mean "none": a JSON null schema or example is stored as SQL NULL. */
const jsonParam = (v: unknown) => (v === null || v === undefined ? null : JSON.stringify(v));

export function eventTypeStore(pool: pg.Pool) {
  return {
    async find(name: string): Promise<EventTypeRow | null> {
      const { rows } = await pool.query<EventTypeRow>({
        name: "event-types-find",
        text: `SELECT ${COLUMNS} FROM event_types WHERE name = $1`,
        values: [name],
      });
      return rows[0] ?? null;
    },

    /** Types after `after` in name order, `limit` at most. */
    async list(after: string | undefined, limit: number): Promise<EventTypeRow[]> {
      const { rows } = await pool.query<EventTypeRow>({
        name: "event-types-list",
        text: `SELECT ${COLUMNS} FROM event_types WHERE $1::text IS NULL OR name > $1
          ORDER BY name LIMIT $2`,
        values: [after ?? null, limit],
      });
      return rows;
    },

    /** Creates or replaces the type (a new version either way); `created` tells which. */
    async put(name: string, w: EventTypeWrite): Promise<{ row: EventTypeRow; created: boolean }> {
      const { rows } = await pool.query<EventTypeRow & { created: boolean }>({
        name: "event-types-put",
        text: `INSERT INTO event_types (id, name, description, schema, example, deprecated, created_at, updated_at)
          VALUES ($1::uuid, $2, $3, $4::json, $5::json, $6, $7, $7)
          ON CONFLICT (name) DO UPDATE SET description = EXCLUDED.description, schema = EXCLUDED.schema,
            example = EXCLUDED.example, deprecated = EXCLUDED.deprecated, updated_at = EXCLUDED.updated_at,
            version = nextval('event_types_version_seq'::regclass)
          RETURNING ${COLUMNS}, (xmax = 0) AS created`,
        values: [
          randomUUID(),
          name,
          w.description,
          jsonParam(w.schema),
          jsonParam(w.example),
          w.deprecated,
          new Date(),
        ],
      });
      const { created, ...row } = rows[0]!;
      return { row, created };
    },

    /** True when the type existed. */
    async remove(name: string): Promise<boolean> {
      const { rowCount } = await pool.query({
        name: "event-types-delete",
        text: "DELETE FROM event_types WHERE name = $1",
        values: [name],
      });
      return (rowCount ?? 0) > 0;
    },
  };
}

export type EventTypeStore = ReturnType<typeof eventTypeStore>;
