import pg from "pg";
import type { WebhooksUnderTest } from "./webhooks-server.js";

// Helpers of the poison-message tests: messages whose deliveries cannot start,
// the dead-letter table, and latency figures.

/** An event message whose payload nests `depth` objects (built as text: JSON.stringify would overflow). */
export function deepEventText(idempotencyKey: string, depth = 10_000): string {
  const payload = `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
  return `{"idempotency_key":"${idempotencyKey}","app":"ledger","type":"COMMITTED_TRANSACTIONS","payload":${payload}}`;
}

/** Runs SQL on its own connection to the service's database. */
export async function sql<R = Record<string, unknown>>(
  api: WebhooksUnderTest,
  text: string,
  params: unknown[] = [],
): Promise<R[]> {
  const client = new pg.Client({ connectionString: api.db.url });
  await client.connect();
  try {
    return (await client.query(text, params)).rows as R[];
  } finally {
    await client.end();
  }
}

/** Holds an exclusive lock on the configs table until released: every config lookup waits on it. */
export const lockConfigs = (api: WebhooksUnderTest) => lockTable(api, "configs");

/** Holds an exclusive lock on `table` until released: every statement on it waits. */
export async function lockTable(
  api: WebhooksUnderTest,
  table: string,
): Promise<{ release(): Promise<void> }> {
  const client = new pg.Client({ connectionString: api.db.url });
  await client.connect();
  await client.query("BEGIN");
  await client.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
  return {
    async release() {
      await client.query("ROLLBACK");
      await client.end();
    },
  };
}

export interface DeadLetterRow {
  id: string;
  config_id: string | null;
  kind: string;
  reason: string;
  delivery_count: number;
  status: string;
  event_type: string | null;
}

export const deadLetters = (api: WebhooksUnderTest) =>
  sql<DeadLetterRow>(
    api,
    `SELECT id, config_id, kind::text AS kind, reason, delivery_count, status::text AS status, event_type
       FROM dead_letters ORDER BY created_at, id`,
  );

/** Polls `probe` until it returns true. */
export async function eventually(
  what: string,
  probe: () => Promise<boolean>,
  timeoutMs: number,
  intervalMs = 200,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** Sum of the samples of `name` whose labels include every given label, from /metrics. */
export async function metric(
  api: WebhooksUnderTest,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  const text = await (await fetch(`${api.url}/metrics`)).text();
  let total = 0;
  for (const line of text.split("\n")) {
    const m = /^(\w+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const has = Object.entries(labels).every(([k, v]) => (m[2] ?? "").includes(`${k}="${v}"`));
    if (has) total += Number(m[3]);
  }
  return total;
}

/** p50, p95 and max of latencies in ms. */
export function latencySummary(values: number[]): { n: number; p50: number; p95: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
  return { n: sorted.length, p50: at(0.5), p95: at(0.95), max: sorted.at(-1) ?? Number.NaN };
}

/** Replays dead letters through the API, a few at a time; returns the answers' statuses. */
export async function replayAll(api: WebhooksUnderTest, ids: string[], concurrency = 8): Promise<number[]> {
  const statuses: number[] = [];
  const queue = [...ids];
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let id = queue.shift(); id; id = queue.shift()) {
        const r = await api.call("POST", `/dead-letters/${id}/replay`);
        if (r.status !== 200) throw new Error(`replay of ${id}: ${r.status} ${r.text}`);
        statuses.push(r.status);
      }
    }),
  );
  return statuses;
}
