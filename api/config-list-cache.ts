import type pg from "pg";
import type { Logger } from "../common/logger.js";
import { type RenderedList, renderList, renderVersionedList } from "./config-list.js";

/**
 * The full list, rendered once and served until the database says it changed.
 * Every write to `configs` bumps `config_list_version` in the writer's own
 * transaction (trigger of migration 20261124000000), so one single-row read per
 * request tells whether the cached body is current, whichever API instance or
 * SQL session wrote. Rendering 10 000 configs costs PostgreSQL ~100 ms; the
 * check costs ~0.2 ms. A rendering also goes stale when a secret overlap ends
 * (the field disappears), checked against the database clock. When the check
 * fails (e.g. the migration is not applied yet), the list is rendered per
 * request as before.
 */
export interface CachedList {
  body: Buffer;
  /** Computed once per rendering; absent when the app generates no ETags. */
  etag?: string | undefined;
}

interface Entry extends CachedList {
  version: string;
  staleAt: number | null;
}

export class ConfigListCache {
  private entry: Entry | undefined;
  /** The rendering under way, shared by the requests that found the cache stale. */
  private rendering: Promise<Entry> | undefined;
  private warned = false;

  constructor(
    private readonly pool: pg.Pool,
    private readonly etagOf: ((body: Buffer) => string | undefined) | undefined,
    private readonly logger?: Logger,
  ) {}

  async get(): Promise<CachedList> {
    let current: { version: string; now: number };
    try {
      const { rows } = await this.pool.query<{ version: string; now: number }>({
        name: "configs-list-version",
        text: `SELECT version::text AS version, (extract(epoch FROM now()) * 1000)::float8 AS now
          FROM config_list_version`,
      });
      if (!rows[0]) throw new Error("config_list_version has no row");
      current = rows[0];
    } catch (err) {
      if (!this.warned) {
        this.warned = true;
        this.logger?.warn({ err: (err as Error).message }, "config list version unreadable; list not cached");
      }
      this.entry = undefined;
      return this.toCached(await renderList(this.pool));
    }
    this.warned = false;
    const fresh = (e: Entry | undefined): e is Entry =>
      e !== undefined &&
      BigInt(e.version) >= BigInt(current.version) &&
      (e.staleAt === null || current.now < e.staleAt);
    if (fresh(this.entry)) return this.entry;
    // A rendering started before this check may predate a write this caller saw: use it only if current.
    const shared = this.rendering ? await this.rendering.catch(() => undefined) : undefined;
    if (fresh(shared)) return shared;
    this.rendering ??= this.render().finally(() => {
      this.rendering = undefined;
    });
    return this.rendering;
  }

  private async render(): Promise<Entry> {
    const rendered = await renderVersionedList(this.pool);
    const entry = { ...this.toCached(rendered), version: rendered.version!, staleAt: rendered.staleAt };
    // Never replace a newer rendering with an older one (versions only grow).
    if (!this.entry || BigInt(entry.version) >= BigInt(this.entry.version)) this.entry = entry;
    return entry;
  }

  private toCached(rendered: RenderedList): CachedList {
    const body = Buffer.from(rendered.body);
    return { body, etag: this.etagOf?.(body) };
  }
}
