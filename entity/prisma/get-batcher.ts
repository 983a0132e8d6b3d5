/**
 * Gathers the get-by-id calls that arrive during one turn of the event loop
 * (one batch per I/O poll: many HTTP requests read together) and fetches them
 * with a single `WHERE id IN (...)` query. Prisma's own batching only merges
 * calls made in the same tick, which concurrent HTTP requests never are.
 *
 * Ids the batch query does not answer (a miss, an id spelled differently from
 * how the database returns it, such as an upper-case uuid) or a batch that
 * fails (one malformed id poisons an IN list) fall back to one query per id,
 * so results are always exactly what a single lookup would give.
 */
export class GetBatcher<R> {
  private pending = new Map<
    string,
    { id: unknown; waiters: { resolve: (r: R | null) => void; reject: (e: unknown) => void }[] }
  >();
  private scheduled = false;

  constructor(
    private readonly fetchMany: (ids: unknown[]) => Promise<R[]>,
    private readonly fetchOne: (id: unknown) => Promise<R | null>,
    private readonly keyOf: (row: R) => string,
    private readonly maxBatch = 100,
  ) {}

  get(id: unknown): Promise<R | null> {
    return new Promise((resolve, reject) => {
      const key = String(id);
      const entry = this.pending.get(key);
      if (entry) entry.waiters.push({ resolve, reject });
      else this.pending.set(key, { id, waiters: [{ resolve, reject }] });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const entries = [...this.pending.values()];
    this.pending = new Map();
    for (let i = 0; i < entries.length; i += this.maxBatch)
      void this.run(entries.slice(i, i + this.maxBatch));
  }

  private async run(
    entries: { id: unknown; waiters: { resolve: (r: R | null) => void; reject: (e: unknown) => void }[] }[],
  ) {
    const settle = async (entry: (typeof entries)[number], found: R | undefined) => {
      try {
        const row = found ?? (await this.fetchOne(entry.id));
        for (const w of entry.waiters) w.resolve(row);
      } catch (err) {
        for (const w of entry.waiters) w.reject(err);
      }
    };
    if (entries.length === 1) return settle(entries[0]!, undefined);
    let rows: R[] | undefined;
    try {
      rows = await this.fetchMany(entries.map((e) => e.id));
    } catch {
      rows = undefined; // retried one by one below, where each id gets its own answer or error
    }
    const byKey = new Map((rows ?? []).map((r) => [this.keyOf(r), r]));
    // One at a time: fallbacks issued together would be merged (and poisoned) by Prisma's own batching.
    const misses = [];
    for (const e of entries) {
      const found = rows ? byKey.get(String(e.id)) : undefined;
      if (found) void settle(e, found);
      else misses.push(e);
    }
    for (const e of misses) await settle(e, undefined);
  }
}
