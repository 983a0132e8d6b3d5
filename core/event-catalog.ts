import type pg from "pg";
import type { Logger } from "../common/logger.js";
import { compileEventSchema, type PayloadCheck } from "./event-schemas.js";

// The event catalog as the start path reads it: one copy per process, of every type's
// version, deprecated flag and compiled schema. Each event looks its type up in memory;
// the copy is checked against the database at most once per CATALOG_TTL_MS (one small
// query whatever the catalog's size), and a schema is compiled again only when its
// type's version changed. Writes through this process's API refresh it at once; other
// processes see a change within CATALOG_TTL_MS.

/** How stale another process's catalog write may be in this process's copy. */
export const CATALOG_TTL_MS = 1000;

export interface CatalogEntry {
  name: string;
  /** Changes on every write of the type (event_types_version_seq). */
  version: string;
  deprecated: boolean;
  /** Absent when the type has no schema, or its schema no longer compiles (logged). */
  check?: PayloadCheck;
}

interface Listed {
  name: string;
  version: string;
  deprecated: boolean;
}

export class EventCatalog {
  private entries = new Map<string, CatalogEntry>();
  /** Digest of every (name, version) the copy holds; null for an empty catalog. */
  private digest: string | null | undefined;
  private checkedAt = Number.NEGATIVE_INFINITY;
  /** Bumped by invalidate(): a load that began before a write must not count as fresh after it. */
  private generation = 0;
  private loading: { promise: Promise<void>; generation: number } | undefined;

  constructor(
    private readonly pool: pg.Pool,
    private readonly logger: Logger,
    private readonly ttlMs = CATALOG_TTL_MS,
  ) {}

  /** The catalog's entry of `type`, from a copy at most the TTL old; undefined when it is not in the catalog. */
  async entry(type: string): Promise<CatalogEntry | undefined> {
    if (performance.now() - this.checkedAt >= this.ttlMs) await this.refresh();
    return this.entries.get(type);
  }

  /** The next lookup reads the database (after a write through this process). */
  invalidate(): void {
    this.generation++;
    this.checkedAt = Number.NEGATIVE_INFINITY;
  }

  /** One load at a time, shared by the lookups that found the copy stale; a new one after a write. */
  private refresh(): Promise<void> {
    if (this.loading?.generation === this.generation) return this.loading.promise;
    const generation = this.generation;
    const previous = this.loading?.promise.catch(() => {}) ?? Promise.resolve();
    const promise: Promise<void> = previous
      .then(() => this.load(generation))
      .finally(() => {
        if (this.loading?.promise === promise) this.loading = undefined;
      });
    this.loading = { promise, generation };
    return promise;
  }

  private async load(generation: number): Promise<void> {
    const startedAt = performance.now();
    const { rows } = await this.pool.query<{ digest: string | null }>({
      name: "event-types-digest",
      text: `SELECT md5(string_agg(name || ':' || version, ',' ORDER BY name)) AS digest FROM event_types`,
    });
    const digest = rows[0]?.digest ?? null;
    if (digest !== this.digest) await this.reload(digest);
    if (generation === this.generation) this.checkedAt = startedAt;
  }

  /** Reads the list, and the schemas of the types that are new or changed since the copy. */
  private async reload(digest: string | null): Promise<void> {
    const { rows } = await this.pool.query<Listed>({
      name: "event-types-versions",
      text: "SELECT name, version::text AS version, deprecated FROM event_types",
    });
    const changed = rows.filter((r) => this.entries.get(r.name)?.version !== r.version).map((r) => r.name);
    const schemas = new Map<string, { version: string; schema: unknown }>();
    if (changed.length > 0) {
      const fetched = await this.pool.query<{ name: string; version: string; schema: unknown }>({
        name: "event-types-schemas",
        text: "SELECT name, version::text AS version, schema FROM event_types WHERE name = ANY($1::text[])",
        values: [changed],
      });
      for (const r of fetched.rows) schemas.set(r.name, r);
    }
    const next = new Map<string, CatalogEntry>();
    for (const r of rows) {
      const held = this.entries.get(r.name);
      const fresh = schemas.get(r.name);
      if (held?.version === r.version || !fresh || fresh.version !== r.version) {
        // Unchanged, or written again between the two reads: the next check catches up.
        if (held) next.set(r.name, held);
        continue;
      }
      next.set(r.name, { ...r, ...this.compiled(r, fresh.schema) });
    }
    this.entries = next;
    // A type written between the reads keeps its older entry (or none): the next check reloads.
    this.digest = rows.every((r) => next.get(r.name)?.version === r.version) ? digest : undefined;
  }

  private compiled(r: Listed, schema: unknown): { check?: PayloadCheck } {
    if (schema === null || schema === undefined) return {};
    try {
      return { check: compileEventSchema(schema) };
    } catch (err) {
      // Accepted when written, refused now (e.g. after an ajv upgrade): deliver rather than block.
      this.logger.error(
        { type: r.name, version: r.version, err: (err as Error).message },
        "event catalog: a stored schema does not compile; events of the type are not checked",
      );
      return {};
    }
  }
}
