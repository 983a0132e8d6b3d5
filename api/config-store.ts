import { randomUUID } from "node:crypto";
import type pg from "pg";
import { inTransaction } from "../common/db/transaction.js";
import type { Batch } from "../core/batching.js";
import { CONFIG_COLUMNS, findConfig } from "../core/config-rows.js";
import type { ConfigSecrets } from "../core/config-secrets.js";
import { type Destination, destinationOf } from "../core/destinations.js";
import { EMPTY_AUTH, readStoredAuth, type StoredAuth, writeStoredAuth } from "../core/endpoint-auth-rows.js";
import type { SignatureHeaderStyle } from "../core/options.js";
import type { Ordering } from "../core/ordering.js";
import { DEFAULT_TENANT_ID } from "../core/tenant-rows.js";
import type { Config } from "../generated/prisma/client.js";

// The configs API's hot queries (get one, create, replace, filtered list) in plain SQL
// on Prisma's own pool, for the reason core/config-rows.ts gives. Rows come back in the
// shape of Prisma's Config.

export interface ConfigWrite {
  endpoint: string;
  eventTypes: string[];
  /** In clear: the store seals it, bound to the row. */
  secret: string;
  /** Absent keeps the current name on replace, and is "" on create. */
  name?: string;
  /** Payload filter (checked); null removes it; absent keeps the current one on replace, none on create. */
  filter?: unknown;
  /** Ordered delivery (core/ordering.ts); null turns it off; absent keeps the current one on replace, none on create. */
  ordering?: Ordering | null;
  /** Batched delivery (core/batching.ts); null turns it off; absent keeps the current one on replace, none on create. */
  batch?: Batch | null;
  /** Names of the signing headers; null: the deployment's; absent keeps the current one on replace, null on create. */
  signatureHeaders?: SignatureHeaderStyle | null;
  /** Sends in flight at most; null: no cap; absent keeps the current one on replace, none on create. */
  maxConcurrency?: number | null;
  /** The owning tenant, on create (the default tenant when absent); a config never changes tenant. */
  tenantId?: string;
  /** Where deliveries go (core/destinations.ts); absent or http: the endpoint. */
  destination?: Destination;
}

/** A replace's fields: a secret absent keeps the stored one and its overlap (a portal session without "secrets"). */
export type ConfigReplace = Omit<ConfigWrite, "secret" | "endpoint" | "destination"> & {
  secret?: string | undefined;
};

/** What a replace decides from the stored row: the endpoint and destination to store, and the auth (undefined keeps it). */
export interface Placement {
  endpoint: string;
  destination: Destination;
  auth: StoredAuth | undefined;
}

/** Decides a replace's placement from what is stored (it may throw a 400 before anything is written). */
export type PlacementOf = (stored: {
  endpoint: string;
  destination: Destination;
  auth: StoredAuth;
}) => Placement;

export interface ConfigFilter {
  id?: string | undefined;
  endpoint?: string | undefined;
  /** Only this tenant's configs (a tenant-scoped token). */
  tenantId?: string | undefined;
}

export interface ConfigStore {
  find(id: string): Promise<Config | null>;
  /**
   * A new config; `authFor` gives its endpoint auth, sealed for the new id (it may throw a
   * 400 before anything is written), stored in the same transaction as the config.
   */
  insert(data: ConfigWrite, authFor?: (configId: string) => StoredAuth): Promise<Config>;
  /**
   * Replaces the user fields, ends any secret overlap when the secret is given, refreshes
   * updatedAt; null when unknown. In one transaction holding the config's row lock,
   * `placementOf` is given the stored endpoint, destination and auth and answers the
   * endpoint, destination and auth to store (undefined keeps the auth) or throws a 400: a
   * concurrent change cannot slip between its check and the write (api/credential-binding.ts).
   */
  replace(
    id: string,
    data: ConfigReplace,
    placementOf: PlacementOf,
  ): Promise<{ config: Config; auth: StoredAuth | null } | null>;
  /** Configs matching every given filter, newest update first. */
  list(filter: ConfigFilter): Promise<Config[]>;
}

/** A filter as a query parameter: its JSON text (pg would send a JS array as a PostgreSQL array), or SQL NULL. */
const filterParam = (filter: unknown): string | null =>
  filter === undefined || filter === null ? null : JSON.stringify(filter);

/** The destination column: null for HTTP (every config written before destinations too). */
const destinationParam = (d: Destination | undefined): string | null =>
  d === undefined || d.type === "http" ? null : JSON.stringify(d);

/** One statement per filter combination, so each keeps an index-friendly plan. */
function listStatement(filter: ConfigFilter): { name: string; text: string; values: string[] } {
  const where: string[] = [];
  const values: string[] = [];
  if (filter.id !== undefined) {
    values.push(filter.id);
    where.push(`id = $${values.length}::uuid`);
  }
  if (filter.endpoint !== undefined) {
    values.push(filter.endpoint);
    where.push(`endpoint = $${values.length}`);
  }
  if (filter.tenantId !== undefined) {
    values.push(filter.tenantId);
    where.push(`tenant_id = $${values.length}::uuid`);
  }
  const named = (key: unknown, letter: string) => (key !== undefined ? letter : "");
  return {
    name: `configs-list-${named(filter.id, "i")}${named(filter.endpoint, "e")}${named(filter.tenantId, "t")}`,
    text: `SELECT ${CONFIG_COLUMNS} FROM configs ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
      ORDER BY updated_at DESC, id DESC`,
    values,
  };
}

export function configStore(pool: pg.Pool, secrets: ConfigSecrets): ConfigStore {
  return {
    async find(id) {
      return findConfig(pool, id);
    },

    async insert(data, authFor) {
      // id and timestamps from this process, as Prisma's client-side defaults did.
      const now = new Date();
      const id = randomUUID();
      const auth = authFor?.(id);
      const statement = {
        name: "configs-insert",
        text: `INSERT INTO configs (id, name, endpoint, event_types, secret, filter, active, created_at, updated_at, tenant_id, ordering, batch, signature_headers, max_concurrency, destination)
          VALUES ($1::uuid, $2, $3, $4::text[], $5, $7::jsonb, TRUE, $6, $6, $8::uuid, $9::jsonb, $10::jsonb, $11::signature_header_style, $12::int, $13::jsonb) RETURNING ${CONFIG_COLUMNS}`,
        values: [
          id,
          data.name ?? "",
          data.endpoint,
          data.eventTypes,
          secrets.seal(id, "secret", data.secret),
          now,
          filterParam(data.filter),
          data.tenantId ?? DEFAULT_TENANT_ID,
          filterParam(data.ordering),
          filterParam(data.batch),
          data.signatureHeaders ?? null,
          data.maxConcurrency ?? null,
          destinationParam(data.destination),
        ],
      };
      // With auth, both rows or neither: a config must never be sent to without the
      // credentials its endpoint was given.
      if (!auth) return (await pool.query<Config>(statement)).rows[0]!;
      return inTransaction(pool, async (client) => {
        const config = (await client.query<Config>(statement)).rows[0]!;
        await writeStoredAuth(client, id, auth);
        return config;
      });
    },

    async replace(id, data, placementOf) {
      const statement = (placed: Placement) => ({
        name: "configs-replace",
        text: `UPDATE configs SET endpoint = $2, event_types = $3::text[], secret = coalesce($4, secret),
            name = coalesce($5, name),
            previous_secret = CASE WHEN $4::text IS NULL THEN previous_secret END,
            previous_secret_expires_at = CASE WHEN $4::text IS NULL THEN previous_secret_expires_at END,
            filter = CASE WHEN $7 THEN $8::jsonb ELSE filter END, updated_at = $6,
            ordering = CASE WHEN $9 THEN $10::jsonb ELSE ordering END,
            batch = CASE WHEN $11 THEN $12::jsonb ELSE batch END,
            signature_headers = CASE WHEN $13 THEN $14::signature_header_style ELSE signature_headers END,
            max_concurrency = CASE WHEN $15 THEN $16::int ELSE max_concurrency END,
            destination = $17::jsonb
          WHERE id = $1::uuid RETURNING ${CONFIG_COLUMNS}`,
        values: [
          id,
          placed.endpoint,
          data.eventTypes,
          data.secret === undefined ? null : secrets.seal(id, "secret", data.secret),
          data.name ?? null,
          new Date(),
          data.filter !== undefined,
          filterParam(data.filter),
          data.ordering !== undefined,
          filterParam(data.ordering),
          data.batch !== undefined,
          filterParam(data.batch),
          data.signatureHeaders !== undefined,
          data.signatureHeaders ?? null,
          data.maxConcurrency !== undefined,
          data.maxConcurrency ?? null,
          destinationParam(placed.destination),
        ],
      });
      return inTransaction(pool, async (client) => {
        const locked = await client.query<{ endpoint: string; destination: unknown }>(
          "SELECT endpoint, destination FROM configs WHERE id = $1::uuid FOR UPDATE",
          [id],
        );
        if (!locked.rows[0]) return null;
        const row = await readStoredAuth(client, id);
        const placed = placementOf({
          endpoint: locked.rows[0].endpoint,
          destination: destinationOf(locked.rows[0]),
          auth: row ?? EMPTY_AUTH,
        });
        const config = (await client.query<Config>(statement(placed))).rows[0]!;
        if (placed.auth) await writeStoredAuth(client, id, placed.auth);
        return { config, auth: placed.auth ?? row };
      });
    },

    async list(filter) {
      return (await pool.query<Config>(listStatement(filter))).rows;
    },
  };
}
