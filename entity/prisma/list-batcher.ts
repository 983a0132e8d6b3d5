import type { Row } from "../server/entity-manager.js";

/** One page asked for: rows [skip, skip + take) of the ordered rows matching a filter. */
interface Waiter<R> {
  skip: number;
  take: number;
  resolve: (rows: R[]) => void;
  reject: (err: unknown) => void;
}

interface Group<R> {
  where: Row;
  waiters: Waiter<R>[];
}

/**
 * Gathers the list calls that arrive during one turn of the event loop (many
 * HTTP requests read together) and answers those with the same filter from one
 * query over the union of their windows: `skip`/`take` over rows ordered by a
 * unique key, so each caller's page is a slice of the union read in the same
 * snapshot, exactly the rows its own query would have returned. Every query
 * runs after all its callers arrived, as theirs would have.
 *
 * Windows are merged only while the union stays within `maxRows` and the gap
 * before a window is no larger than that window (rows read and thrown away are
 * bounded by the rows asked for). A filter that cannot be keyed exactly, and a
 * merged query that fails, fall back to one query per call, so each caller gets
 * its own answer or error.
 */
export class ListBatcher<R> {
  private pending = new Map<string, Group<R>>();
  private scheduled = false;

  constructor(
    private readonly fetch: (where: Row, skip: number, take: number) => Promise<R[]>,
    private readonly maxRows = 1000,
  ) {}

  list(where: Row, skip: number, take: number): Promise<R[]> {
    const key = filterKey(where);
    if (key === undefined) return this.fetch(where, skip, take);
    return new Promise((resolve, reject) => {
      const group = this.pending.get(key);
      const waiter = { skip, take, resolve, reject };
      if (group) group.waiters.push(waiter);
      else this.pending.set(key, { where, waiters: [waiter] });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const groups = [...this.pending.values()];
    this.pending = new Map();
    for (const group of groups) {
      for (const span of this.spans(group.waiters)) void this.run(group.where, span);
    }
  }

  /** Splits waiters (sorted by skip) into runs whose windows merge within the limits. */
  private spans(waiters: Waiter<R>[]): Waiter<R>[][] {
    const sorted = waiters.length > 1 ? [...waiters].sort((a, b) => a.skip - b.skip) : waiters;
    const out: Waiter<R>[][] = [];
    let current: Waiter<R>[] = [];
    let start = 0;
    let end = 0;
    for (const w of sorted) {
      const wEnd = w.skip + w.take;
      if (current.length > 0 && w.skip - end <= w.take && Math.max(end, wEnd) - start <= this.maxRows) {
        current.push(w);
        end = Math.max(end, wEnd);
        continue;
      }
      if (current.length > 0) out.push(current);
      current = [w];
      start = w.skip;
      end = wEnd;
    }
    if (current.length > 0) out.push(current);
    return out;
  }

  private async run(where: Row, waiters: Waiter<R>[]): Promise<void> {
    if (waiters.length === 1) return this.single(where, waiters[0]!);
    const start = waiters[0]!.skip;
    const end = Math.max(...waiters.map((w) => w.skip + w.take));
    let rows: R[];
    try {
      rows = await this.fetch(where, start, end - start);
    } catch {
      // Retried one by one, so each caller gets the error (or answer) of its own query.
      for (const w of waiters) await this.single(where, w);
      return;
    }
    // A row in two windows (the same page asked twice) is copied for the second caller,
    // so each caller owns its row objects, as with its own query.
    const handedOut = new Uint8Array(rows.length);
    for (const w of waiters) {
      const from = w.skip - start;
      const to = Math.min(rows.length, from + w.take);
      const page: R[] = [];
      for (let i = from; i < to; i++) {
        page.push(handedOut[i] ? { ...rows[i]! } : rows[i]!);
        handedOut[i] = 1;
      }
      w.resolve(page);
    }
  }

  private async single(where: Row, w: Waiter<R>): Promise<void> {
    try {
      w.resolve(await this.fetch(where, w.skip, w.take));
    } catch (err) {
      w.reject(err);
    }
  }
}

/**
 * A text equal for two filters exactly when they select the same rows:
 * keys sorted, each value tagged with its kind. Undefined for a value of
 * another kind (it is not batched).
 */
export function filterKey(where: Row): string | undefined {
  const keys = Object.keys(where);
  if (keys.length === 0) return "";
  let out = "";
  for (const key of keys.sort()) {
    const value = valueKey(where[key]);
    if (value === undefined) return undefined;
    out += `${JSON.stringify(key)}:${value},`;
  }
  return out;
}

function valueKey(v: unknown): string | undefined {
  switch (typeof v) {
    case "string":
      return `s${JSON.stringify(v)}`;
    case "number":
      return Object.is(v, -0) ? "n-0" : `n${v}`;
    case "bigint":
      return `b${v}`;
    case "boolean":
      return v ? "t" : "f";
    case "object": {
      if (v === null) return "z";
      if (v instanceof Date) return `d${v.getTime()}`;
      if (v instanceof Uint8Array)
        return `x${Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString("hex")}`;
      if (Array.isArray(v)) {
        const items = v.map(valueKey);
        return items.includes(undefined) ? undefined : `[${items.join(",")}]`;
      }
      return undefined;
    }
    default:
      return undefined;
  }
}
