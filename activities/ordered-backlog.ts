import type pg from "pg";
import { inLazyTransaction } from "../common/db/transaction.js";
import { isBatchWorkflowId, restartWorkflowId } from "../core/batching.js";
import type { EventRef } from "../core/stored-events.js";
import { eventOfRow } from "../core/stored-events.js";
import { closeUnsent } from "./unsent-deliveries.js";

// An ordered key's backlog (table ordered_backlog, migration 20261204000000): the rows its
// sequencer (workflows/key-sequencer.ts) reads in seq order, through the local activities
// here. The order is the database's; the workflow holds only what it is doing now.

/** One delivery of the key's backlog, as the sequencer starts it. */
export interface BacklogItem {
  seq: string;
  webhookId: string;
  workflowId: string;
  eventRef: EventRef;
  eventType: string;
  replayOf?: string;
  /** When it was accepted (ISO): a batch waits from its oldest member's. */
  acceptedAt: string;
  /**
   * It was sent before (it has attempt rows, or its first send ran) or a batch adopted it:
   * that workflow goes on with it (or reconciliation restarts it from its rows); the
   * sequencer only waits for its end.
   */
  sent: boolean;
}

export interface Backlog {
  items: BacklogItem[];
  /** The key's newest seq when this was read: the sequencer goes idle only if nothing came after it. */
  lastSeq: string;
  /** The key's row says it is blocked (a run that begins takes it up). */
  blocked?: { webhookId: string; reason: string };
}

export interface KeyRef {
  sequencerId: string;
  configId: string;
  orderingKey: string;
}

export interface BacklogRead extends KeyRef {
  /** Deliveries whose turn ended: their rows go before the read. */
  done: string[];
  limit: number;
  /** Replays of these webhooks come first (a replay of a blocked head is the operator's retry). */
  replaysOf?: string[];
  /** The sequencer begins or woke: its key's row says so, and enqueues stop waking it. */
  activate?: boolean;
}

/**
 * How a delivery the sequencer found started ended, from its rows; undefined while it goes
 * on. `lost`: its workflow is gone before any send (the sequencer starts it again).
 */
export type RowsEnd = { failed?: string } | { lost: true; workflowId: string } | undefined;

export interface OrderedBacklogActivities {
  readBacklog(r: BacklogRead): Promise<Backlog>;
  /** Marks the key idle unless rows came after `lastSeq`; false then (read again). */
  parkKey(k: KeyRef & { lastSeq: string }): Promise<boolean>;
  deliveryEnded(d: { webhookId: string; workflowId: string }): Promise<RowsEnd>;
}

export interface OrderedBacklogDeps {
  pool: pg.Pool;
  /** The workflow's status name, MISSING when Temporal has none (workers/reconcile-repairs.ts). */
  workflowStatus: (workflowId: string) => Promise<string>;
}

/** Workflow states that end a delivery never sent: the operator ended it, the key goes on. */
const ENDED_UNSENT: Record<string, string> = {
  TERMINATED: "workflow terminated",
  CANCELLED: "cancelled",
  COMPLETED: "workflow completed without sending",
};

interface BacklogRow {
  seq: string;
  webhook_id: string;
  workflow_id: string;
  event_id: string | null;
  payload: string | null;
  type: string | null;
  bytes: number | null;
  replay_of: string | null;
  accepted_at: string;
  sent: boolean;
}

export function createOrderedBacklogActivities({
  pool,
  workflowStatus,
}: OrderedBacklogDeps): OrderedBacklogActivities {
  return {
    readBacklog: (r) => readBacklog(pool, r),

    async parkKey(k) {
      // A key whose row went (rows of the earlier shape were deleted when idle) gets one.
      const { rowCount } = await pool.query({
        name: "backlog-park",
        text: `INSERT INTO ordering_keys (config_id, ordering_key, workflow_id, state, last_seq)
               VALUES ($1::uuid, $2, $4, 'idle', $3::bigint)
               ON CONFLICT (config_id, ordering_key) DO UPDATE
                 SET state = 'idle', head_webhook_id = NULL, reason = NULL, updated_at = now()
                 WHERE ordering_keys.last_seq <= $3::bigint`,
        values: [k.configId, k.orderingKey, k.lastSeq, k.sequencerId],
      });
      return rowCount === 1;
    },

    async deliveryEnded({ webhookId, workflowId }) {
      const { rows } = await pool.query<{
        unsent: string | null;
        status: string | null;
        error: string | null;
      }>({
        name: "backlog-delivery-ended",
        text: `SELECT (SELECT state::text FROM unsent_deliveries WHERE webhook_id = $1::uuid) AS unsent,
                      a.status::text AS status, a.error
                 FROM (SELECT 1) one
                 LEFT JOIN LATERAL (SELECT status, error FROM attempts WHERE webhook_id = $1::uuid
                                     ORDER BY retry_attempt DESC LIMIT 1) a ON true`,
        values: [webhookId],
      });
      const { unsent, status, error } = rows[0]!;
      if (status === "to retry" || status === "retrying") return undefined;
      if (status === "failed") return { failed: error ?? "failed" };
      if (status === "success" || unsent !== "waiting") return {};
      // Never sent: its workflow (the delivery's, or the batch that adopted it) still runs?
      const now = await workflowStatus(workflowId);
      if (now === "RUNNING") return undefined;
      const ended = ENDED_UNSENT[now];
      if (!ended) {
        if (!isBatchWorkflowId(workflowId)) return { lost: true, workflowId };
        // A lost batch's event goes alone, under a workflow id of its own.
        const own = restartWorkflowId(webhookId);
        await pool.query({
          name: "backlog-lost-batch",
          text: "UPDATE unsent_deliveries SET workflow_id = $2, updated_at = now() WHERE webhook_id = $1::uuid",
          values: [webhookId, own],
        });
        return { lost: true, workflowId: own };
      }
      await closeUnsent(pool, webhookId, ended);
      return {};
    },
  };
}

/** A pool, or a client of it inside a transaction. */
type Queryable = pg.Pool | pg.PoolClient;

/** Takes deliveries out of their key's backlog: their turn ended. */
async function deleteRows(db: Queryable, webhookIds: string[]): Promise<void> {
  await db.query({
    name: "backlog-done",
    text: "DELETE FROM ordered_backlog WHERE webhook_id = ANY($1::uuid[])",
    values: [webhookIds],
  });
}

/**
 * Deletes the rows of deliveries whose turn ended, then reads the key's next ones. Its
 * writes are bookkeeping a crash of PostgreSQL may lose (inLazyTransaction): a row deleted
 * again comes back as sent and its end is read from its attempt rows, an activation lost
 * costs an enqueue one wake signal, a head's turn lost lets reconciliation look at it
 * sooner (and find its sequencer running). So a key's turn waits for no fsync of its own:
 * a send's claim and attempt rows are the only commits per event that do.
 */
async function readBacklog(pool: pg.Pool, r: BacklogRead): Promise<Backlog> {
  for (let first = true; ; first = false) {
    const { read, items, gone } = await inLazyTransaction(pool, async (client) => {
      if (first && r.done.length > 0) await deleteRows(client, r.done);
      if (first && r.activate)
        await client.query({
          name: "backlog-activate",
          text: `UPDATE ordering_keys SET state = 'active', workflow_id = $3, updated_at = now()
                  WHERE config_id = $1::uuid AND ordering_key = $2 AND state = 'idle'`,
          values: [r.configId, r.orderingKey, r.sequencerId],
        });
      const read = await readRows(client, r);
      const gone: BacklogRow[] = [];
      const items: BacklogItem[] = [];
      for (const row of read.rows) {
        const item = await itemOf(client, row);
        if (item) items.push(item);
        else gone.push(row);
      }
      // The head's turn starts now: reconciliation's walk of first sends that wait gives
      // the sequencer its grace before it looks at it (workers/reconcile-unsent.ts).
      const head = items[0];
      if (gone.length === 0 && head && !head.sent)
        await client.query({
          name: "backlog-head-turn",
          text: `UPDATE unsent_deliveries SET next_try_at = now() WHERE webhook_id = $1::uuid AND state = 'waiting'`,
          values: [head.webhookId],
        });
      return { read, items, gone };
    });
    if (gone.length === 0)
      return { items, lastSeq: read.lastSeq, ...(read.blocked ? { blocked: read.blocked } : {}) };
    // Nothing left to send of these: closed with the reason, and out of the key's way.
    for (const row of gone) await closeUnsent(pool, row.webhook_id, "its event is no longer stored");
    await deleteRows(
      pool,
      gone.map((g) => g.webhook_id),
    );
  }
}

/** The key's next rows (replays of `replaysOf` first) and its newest seq, in one snapshot. */
async function readRows(
  db: Queryable,
  r: BacklogRead,
): Promise<{ rows: BacklogRow[]; lastSeq: string; blocked?: { webhookId: string; reason: string } }> {
  const { rows } = await db.query<{
    last_seq: string | null;
    state: string | null;
    head: string | null;
    reason: string | null;
    items: BacklogRow[];
  }>({
    name: "backlog-read",
    text: `SELECT k.last_seq::text AS last_seq, k.state, k.head_webhook_id AS head, k.reason,
                  COALESCE((SELECT json_agg(x ORDER BY x.first DESC, x.seq::bigint) FROM (
                    SELECT b.seq::text AS seq, u.webhook_id, u.workflow_id, u.event_id, u.payload, e.type, e.bytes,
                           u.replay_of, u.accepted_at,
                           u.replay_of = ANY($5::uuid[]) IS TRUE AS first,
                           (u.state <> 'waiting' OR u.workflow_id LIKE 'batch:%'
                            OR EXISTS (SELECT 1 FROM attempts a WHERE a.webhook_id = u.webhook_id)) AS sent
                      FROM ordered_backlog b
                      JOIN unsent_deliveries u ON u.webhook_id = b.webhook_id
                      LEFT JOIN events e ON e.id = u.event_id
                     WHERE b.sequencer_id = $1
                     ORDER BY u.replay_of = ANY($5::uuid[]) IS TRUE DESC, b.seq
                     LIMIT $4) x), '[]'::json) AS items
             FROM (SELECT 1) one
             LEFT JOIN ordering_keys k ON k.config_id = $2::uuid AND k.ordering_key = $3`,
    values: [r.sequencerId, r.configId, r.orderingKey, r.limit, r.replaysOf ?? []],
  });
  const row = rows[0]!;
  return {
    rows: row.items,
    lastSeq: row.last_seq ?? "0",
    ...(row.state === "blocked" && row.head
      ? { blocked: { webhookId: row.head, reason: row.reason ?? "failed" } }
      : {}),
  };
}

/** The item of a row; null when its event is no longer stored. */
async function itemOf(db: Queryable, row: BacklogRow): Promise<BacklogItem | null> {
  let ref: EventRef;
  let type: string;
  if (row.event_id && row.type !== null && row.bytes !== null) {
    ref = { id: row.event_id, bytes: row.bytes };
    type = row.type;
  } else {
    // A row written before events were stored by reference, or whose event went.
    const event = await eventOfRow(db, { eventId: row.event_id, payload: row.payload });
    if (!event) return null;
    ref = event.ref;
    type = event.type;
  }
  return {
    seq: row.seq,
    webhookId: row.webhook_id,
    workflowId: row.workflow_id,
    eventRef: ref,
    eventType: type,
    ...(row.replay_of ? { replayOf: row.replay_of } : {}),
    acceptedAt: new Date(row.accepted_at).toISOString(),
    sent: row.sent,
  };
}
