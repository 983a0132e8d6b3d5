import type pg from "pg";
import type { Logger } from "../common/logger.js";
import { configListRefreshes } from "../core/metrics.js";
import {
  type ListChanges,
  type ListedConfig,
  type ListSnapshot,
  listBody,
  loadChanges,
  loadList,
  renderList,
} from "./config-list.js";

/**
 * The full list, kept per API instance and checked against the database on
 * every request. Every statement that writes `configs` bumps
 * `config_list_version` and logs the ids it touched in `config_list_changes`
 * in the writer's own transaction (trigger of migration 20261125000000), so one
 * single-row read tells whether the cached body is current, whichever API
 * instance or SQL session wrote; when it is not, only the changed configs are
 * read again and spliced in (a few ms for 10 000 configs instead of ~100 ms for
 * PostgreSQL to render them all). A rendering also goes stale when a secret
 * overlap ends (the field disappears), checked against the database clock;
 * that, a TRUNCATE or falling more than the kept changes behind loads the whole
 * list again. When the version cannot be read (e.g. the migrations are not
 * applied yet), the list is rendered per request.
 */
export interface CachedList {
  body: Buffer;
  /** Computed once per rendering; absent when the app generates no ETags. */
  etag?: string | undefined;
}

interface Entry extends CachedList, ListSnapshot {}

export class ConfigListCache {
  private entry: Entry | undefined;
  /** The refresh under way, shared by the requests that found the cache stale. */
  private refreshing: Promise<Entry> | undefined;
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
      configListRefreshes.inc({ kind: "uncached" });
      return this.cached((await renderList(this.pool)).body);
    }
    this.warned = false;
    const expired = (e: Entry) => e.staleAt !== null && current.now >= e.staleAt;
    const fresh = (e: Entry | undefined): e is Entry =>
      e !== undefined && BigInt(e.version) >= BigInt(current.version) && !expired(e);
    if (fresh(this.entry)) return this.entry;
    // A refresh started before this check may predate a write this caller saw: use it only if current.
    const shared = this.refreshing ? await this.refreshing.catch(() => undefined) : undefined;
    if (fresh(shared)) return shared;
    const base = this.entry && !expired(this.entry) ? this.entry : undefined;
    this.refreshing ??= this.refresh(base).finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  private async refresh(base: Entry | undefined): Promise<Entry> {
    let snapshot: ListSnapshot | undefined;
    if (base) {
      const changes = await loadChanges(this.pool, base.version);
      snapshot = applyChanges(base, changes);
      if (snapshot) configListRefreshes.inc({ kind: "changes" });
    }
    if (!snapshot) {
      snapshot = await loadList(this.pool);
      configListRefreshes.inc({ kind: "full" });
    }
    const entry: Entry = { ...snapshot, ...this.cached(listBody(snapshot.configs.map((c) => c.json))) };
    // Never replace a newer rendering with an older one (versions only grow).
    if (!this.entry || BigInt(entry.version) >= BigInt(this.entry.version)) this.entry = entry;
    return entry;
  }

  private cached(text: string): CachedList {
    const body = Buffer.from(text);
    return { body, etag: this.etagOf?.(body) };
  }
}

/** Newest first: the larger sort key comes first. */
const byListOrder = (a: ListedConfig, b: ListedConfig) =>
  a.sortKey > b.sortKey ? -1 : a.sortKey < b.sortKey ? 1 : 0;

/**
 * `base` with `changes` spliced in, in list order; undefined when the changes
 * do not cover every version since `base` (pruned, or a TRUNCATE).
 */
export function applyChanges(base: ListSnapshot, changes: ListChanges): ListSnapshot | undefined {
  const behind = BigInt(changes.version) - BigInt(base.version);
  if (!changes.complete || BigInt(changes.versions) !== behind) return undefined;
  const touched = new Set([...changes.gone, ...changes.present.map((c) => c.id)]);
  const kept = base.configs.filter((c) => !touched.has(c.id));
  const added = [...changes.present].sort(byListOrder);
  const configs: ListedConfig[] = [];
  let i = 0;
  let j = 0;
  while (i < kept.length || j < added.length) {
    if (j >= added.length || (i < kept.length && byListOrder(kept[i]!, added[j]!) <= 0))
      configs.push(kept[i++]!);
    else configs.push(added[j++]!);
  }
  let staleAt: number | null = null;
  for (const c of configs)
    if (c.expiresAt !== null && (staleAt === null || c.expiresAt < staleAt)) staleAt = c.expiresAt;
  return { version: changes.version, configs, staleAt };
}
