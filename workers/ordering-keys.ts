import { type Client, WorkflowNotFoundError } from "@temporalio/client";
import type pg from "pg";
import type { PrismaClient } from "../common/db/database.js";
import { releaseHeadSignal, releaseKeySignal } from "../workflows/key-sequencer.js";

// The ordering keys of a config as their sequencers recorded them (table ordering_keys,
// activities/ordering-activities.ts; an idle key, with no sequencer running, is not
// listed), and the signals operators and config changes send them.

export interface OrderingKeyRow {
  orderingKey: string;
  workflowId: string;
  state: "active" | "blocked";
  headWebhookId: string | null;
  reason: string | null;
  /** Backlog rows of the key: deliveries whose turn has not ended. */
  queued: number;
  updatedAt: Date;
}

const COLUMNS = `ordering_key AS "orderingKey", workflow_id AS "workflowId", state,
  head_webhook_id AS "headWebhookId", reason, updated_at AS "updatedAt",
  (SELECT count(*)::int FROM ordered_backlog b WHERE b.sequencer_id = ordering_keys.workflow_id) AS queued`;

export async function listOrderingKeys(
  pool: pg.Pool,
  configId: string,
  state?: "active" | "blocked",
): Promise<OrderingKeyRow[]> {
  const { rows } = await pool.query<OrderingKeyRow>({
    text: `SELECT ${COLUMNS} FROM ordering_keys WHERE config_id = $1::uuid AND state <> 'idle'
             AND ($2::text IS NULL OR state = $2) ORDER BY ordering_key LIMIT 1000`,
    values: [configId, state ?? null],
  });
  return rows;
}

export async function findOrderingKey(
  pool: pg.Pool,
  configId: string,
  key: string,
): Promise<OrderingKeyRow | null> {
  const { rows } = await pool.query<OrderingKeyRow>({
    text: `SELECT ${COLUMNS} FROM ordering_keys WHERE config_id = $1::uuid AND ordering_key = $2 AND state <> 'idle'`,
    values: [configId, key],
  });
  return rows[0] ?? null;
}

/** How many keys are blocked now, over every config (the webhooks_ordering_keys_blocked gauge). */
export async function countBlockedKeys(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM ordering_keys WHERE state = 'blocked'",
  );
  return rows[0]!.n;
}

/**
 * Releases a blocked key (its failed head stays failed); false when its workflow is gone.
 * It names the head it releases: a release that comes after another head blocked the key
 * leaves that one alone.
 */
export async function skipOrderingKeyHead(
  temporal: Client,
  workflowId: string,
  headWebhookId: string | null,
): Promise<boolean> {
  try {
    await temporal.workflow.getHandle(workflowId).signal(releaseHeadSignal, headWebhookId ?? undefined);
    return true;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
}

/**
 * Tells the config's sequencers the config went away or stopped ordering: a blocked key
 * lets its backlog drain, each delivery closing without a send (or, when only ordering
 * stopped, sent) when its turn comes.
 */
export async function closeOrderedKeys(
  temporal: Client,
  prisma: PrismaClient,
  configId: string,
  reason: string,
): Promise<number> {
  const rows = await prisma.orderingKey.findMany({
    where: { configId, state: { not: "idle" } },
    select: { workflowId: true },
  });
  let signalled = 0;
  for (const { workflowId } of rows) {
    try {
      await temporal.workflow.getHandle(workflowId).signal(releaseKeySignal, reason);
      signalled++;
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
    }
  }
  return signalled;
}
