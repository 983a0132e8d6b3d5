import type { Client } from "@temporalio/client";
import pg from "pg";
import type { Received } from "./receiver.js";

/** What became of a batch of deliveries, from the attempts table and the receiver's side. */
export interface DeliveryAudit {
  /** Events of the batch no POST of which was answered 2xx. */
  lost: string[];
  /** (webhook_id, retry_attempt) pairs with more than one row. */
  duplicateRows: number;
  /** Rows still `to retry` or `retrying`. */
  queued: number;
  /** Deliveries whose newest row is not `success`. */
  notSucceeded: number;
  /** Deliveries with at least one row. */
  deliveries: number;
  /** POSTs beyond one per attempt row: the same attempt of a delivery sent more than once. */
  duplicatePosts: number;
  /** Attempt rows in all. */
  rows: number;
}

const keyOf = (r: Received) => (JSON.parse(r.body) as { idempotency_key: string }).idempotency_key;

/**
 * Reads the attempts of `configId` and compares them with what the receiver got for
 * `keys`. `answered` says which receipts the receiver answered 2xx.
 */
export async function auditDeliveries(
  dbUrl: string,
  configId: string,
  keys: string[],
  received: Received[],
  answered: (r: Received) => boolean,
): Promise<DeliveryAudit> {
  const db = new pg.Client({ connectionString: dbUrl });
  await db.connect();
  try {
    const one = async (sql: string) => Number((await db.query(sql, [configId])).rows[0].n);
    const duplicateRows = await one(
      `SELECT count(*) AS n FROM (SELECT webhook_id, retry_attempt FROM attempts WHERE config_id = $1
         GROUP BY webhook_id, retry_attempt HAVING count(*) > 1) d`,
    );
    const queued = await one(
      `SELECT count(*) AS n FROM attempts WHERE config_id = $1 AND status IN ('to retry', 'retrying')`,
    );
    const { rows: last } = await db.query<{ webhook_id: string; status: string; rows: string }>(
      `SELECT DISTINCT ON (webhook_id) webhook_id, status::text AS status,
              count(*) OVER (PARTITION BY webhook_id) AS rows
         FROM attempts WHERE config_id = $1 ORDER BY webhook_id, retry_attempt DESC`,
      [configId],
    );
    const rowsOf = new Map(last.map((r) => [r.webhook_id, Number(r.rows)]));
    const posts = new Map<string, number>();
    for (const r of received) {
      const id = String(r.headers["svc-webhook-id"]);
      posts.set(id, (posts.get(id) ?? 0) + 1);
    }
    let duplicatePosts = 0;
    for (const [id, n] of posts) duplicatePosts += Math.max(0, n - (rowsOf.get(id) ?? 0));
    const delivered = new Set(received.filter(answered).map(keyOf));
    return {
      lost: keys.filter((k) => !delivered.has(k)),
      duplicateRows,
      queued,
      notSucceeded: last.filter((r) => r.status !== "success").length,
      deliveries: last.length,
      duplicatePosts,
      rows: [...rowsOf.values()].reduce((a, b) => a + b, 0),
    };
  } finally {
    await db.end();
  }
}

/** Audits every `everyMs` until every one of `keys` has a delivery whose newest row is `success` and nothing is queued. */
export async function waitUntilDelivered(
  audit: () => Promise<DeliveryAudit>,
  expected: number,
  timeoutMs: number,
  everyMs = 500,
): Promise<DeliveryAudit> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const a = await audit();
    const done = a.deliveries === expected && a.queued === 0 && a.notSucceeded === 0;
    if (done || Date.now() > deadline) return a;
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** The workflows among `ids` that did not complete with a `success` result (bounded: describes, never waits). */
export async function workflowsNotSucceeded(temporal: Client, ids: string[]): Promise<string[]> {
  const bad: string[] = [];
  for (const id of ids) {
    const handle = temporal.workflow.getHandle(id);
    const { status } = await handle.describe();
    if (status.name !== "COMPLETED" || (await handle.result()).status !== "success")
      bad.push(`${id}: ${status.name}`);
  }
  return bad;
}
