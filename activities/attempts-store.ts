import { randomUUID } from "node:crypto";
import type { Database, PrismaClient } from "../common/db/database.js";
import type { Attempt, Config } from "../generated/prisma/client.js";
import { AttemptStatus as DbStatus, Prisma } from "../generated/prisma/client.js";
import type { AttemptStatus, AttemptSummary } from "./delivery-types.js";
import { CLAIM_DONE } from "./send-claims.js";
import { UNSENT_SENT } from "./unsent-deliveries.js";

// The attempts table as the delivery workflow mirrors it: every transition of
// the attempt state table (docs/spec-rules.md#attempt-states) is one of these writes.

const TO_DB: Record<AttemptStatus, DbStatus> = {
  success: DbStatus.success,
  "to retry": DbStatus.toRetry,
  retrying: DbStatus.retrying,
  failed: DbStatus.failed,
};
export const fromDbStatus = (s: DbStatus): AttemptStatus => (s === DbStatus.toRetry ? "to retry" : s);

/** The config as snapshotted into attempt rows: everything but its secrets. */
export function configSnapshot(c: Config): Prisma.InputJsonObject {
  return {
    id: c.id,
    name: c.name,
    endpoint: c.endpoint,
    eventTypes: c.eventTypes,
    active: c.active,
    tenantId: c.tenantId,
    createdAt: c.createdAt.toISOString(),
    updatedAt: c.updatedAt.toISOString(),
  };
}

export function summarize(a: Attempt): AttemptSummary {
  return {
    id: a.id,
    retryAttempt: a.retryAttempt,
    status: fromDbStatus(a.status),
    statusCode: a.statusCode,
    nextRetryAfter: a.nextRetryAfter?.toISOString() ?? null,
    error: a.error,
    createdAt: a.createdAt.toISOString(),
  };
}

export const findAttempt = (db: PrismaClient, webhookId: string, retryAttempt: number) =>
  db.attempt.findUnique({ where: { webhookId_retryAttempt: { webhookId, retryAttempt } } });

/**
 * Where the delivery's caps count from: its first attempt, or when it was accepted if its
 * first send had to wait (unsent-deliveries.ts).
 */
export async function firstAttemptAt(db: PrismaClient, webhookId: string): Promise<Date | undefined> {
  const [row] = await db.$queryRaw<{ first: Date | null }[]>`
    SELECT LEAST(
      (SELECT accepted_at FROM unsent_deliveries WHERE webhook_id = ${webhookId}::uuid),
      (SELECT created_at FROM attempts WHERE webhook_id = ${webhookId}::uuid ORDER BY retry_attempt LIMIT 1)
    ) AS first`;
  return row?.first ?? undefined;
}

export interface NewAttempt {
  webhookId: string;
  config: Config;
  /** The stored event sent (core/stored-events.ts); the row references it instead of a copy. */
  eventId: string;
  statusCode: number;
  /** How long the send took; absent when nothing was sent. */
  durationMs?: number | undefined;
  retryAttempt: number;
  status: AttemptStatus;
  nextRetryAfter: Date | null;
  error: string | null;
  replayOf?: string | undefined;
  /** The delivery workflow writing the row; absent for test deliveries. */
  workflowId?: string | undefined;
  /** The batch the event was sent in (activities/batch-activities.ts); absent when sent alone. */
  batchId?: string | undefined;
}

/** The attempts table's columns in the shape of Prisma's Attempt (its enum names, not the stored values). */
const ATTEMPT_COLUMNS = `id, webhook_id AS "webhookId", config_id AS "configId", config, payload,
  event_id AS "eventId", status_code AS "statusCode", duration_ms AS "durationMs", retry_attempt AS "retryAttempt",
  CASE status WHEN 'to retry' THEN 'toRetry' ELSE status::text END AS status,
  next_retry_after AS "nextRetryAfter", error, replay_of AS "replayOf", workflow_id AS "workflowId",
  batch_id AS "batchId", created_at AS "createdAt", updated_at AS "updatedAt"`;

/**
 * A first attempt, which has claimed nothing: one INSERT in plain SQL (every delivery
 * writes one; Prisma's cost per query is several times the round trip, see
 * core/config-rows.ts). Idempotent on (webhook_id, retry_attempt): a repeated call (a
 * retried or re-run send, rare) inserts nothing and returns the stored row.
 */
async function insertFirstAttempt(db: Pick<Database, "prisma" | "pool">, a: NewAttempt): Promise<Attempt> {
  const { rows } = await db.pool.query<Attempt>({
    name: "attempts-insert-first",
    // The send's claim is done once its row exists (send-claims.ts), in the same statement.
    // So is a wait before the first send (unsent-deliveries.ts).
    text: `WITH claim_done AS (${CLAIM_DONE.replace("$1::uuid", "$2::uuid").replace("$2::int", "0")}),
        unsent_sent AS (${UNSENT_SENT.replace("$1::uuid", "$2::uuid")})
      INSERT INTO attempts (id, webhook_id, config_id, config, event_id, status_code, duration_ms,
        retry_attempt, status, next_retry_after, error, replay_of, workflow_id, batch_id)
      VALUES ($1::uuid, $2::uuid, $3::uuid, $4::jsonb, $5, $6, $7, 0, $8::attempt_status, $9, $10, $11::uuid, $12, $13::uuid)
      ON CONFLICT (webhook_id, retry_attempt) DO NOTHING
      RETURNING ${ATTEMPT_COLUMNS}`,
    values: [
      randomUUID(),
      a.webhookId,
      a.config.id,
      JSON.stringify(configSnapshot(a.config)),
      a.eventId,
      a.statusCode,
      a.durationMs ?? null,
      a.status,
      a.nextRetryAfter,
      a.error,
      a.replayOf ?? null,
      a.workflowId ?? null,
      a.batchId ?? null,
    ],
  });
  return rows[0] ?? (await findAttempt(db.prisma, a.webhookId, 0))!;
}

/**
 * The first attempts of a batch's events (activities/batch-activities.ts), which share
 * everything but their webhook and event ids: one INSERT for all, with each event's send
 * claim and waiting row done in the same statement, as insertFirstAttempt does for one.
 * One statement, so a re-run finds every row or none. Idempotent as insertFirstAttempt.
 */
export async function insertFirstAttempts(
  pool: Database["pool"],
  shared: Omit<NewAttempt, "webhookId" | "eventId" | "retryAttempt" | "replayOf">,
  events: { webhookId: string; eventId: string }[],
): Promise<void> {
  await pool.query({
    name: "attempts-insert-first-many",
    text: `WITH new AS (SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[]) AS n(id, webhook_id, event_id)),
        claim_done AS (UPDATE send_claims SET expires_at = 'infinity'
          WHERE webhook_id IN (SELECT webhook_id FROM new) AND retry_attempt = 0),
        unsent_sent AS (UPDATE unsent_deliveries SET state = 'sent', updated_at = now()
          WHERE webhook_id IN (SELECT webhook_id FROM new) AND state = 'waiting')
      INSERT INTO attempts (id, webhook_id, config_id, config, event_id, status_code, duration_ms,
        retry_attempt, status, next_retry_after, error, workflow_id, batch_id)
      SELECT n.id, n.webhook_id, $4::uuid, $5::jsonb, n.event_id, $6, $7, 0, $8::attempt_status, $9, $10, $11, $12::uuid
        FROM new n
      ON CONFLICT (webhook_id, retry_attempt) DO NOTHING`,
    values: [
      events.map(() => randomUUID()),
      events.map((e) => e.webhookId),
      events.map((e) => e.eventId),
      shared.config.id,
      JSON.stringify(configSnapshot(shared.config)),
      shared.statusCode,
      shared.durationMs ?? null,
      shared.status,
      shared.nextRetryAfter,
      shared.error,
      shared.workflowId ?? null,
      shared.batchId ?? null,
    ],
  });
}

/**
 * Inserts the attempt and, in the same transaction, moves the rows this retry
 * claimed out of `retrying`: they take the new row's status, or `failed` when
 * the new row is `to retry`, so only the newest row stays queued. Idempotent on
 * (webhook_id, retry_attempt): a repeated call returns the stored row.
 */
export async function recordAttempt(db: Pick<Database, "prisma" | "pool">, a: NewAttempt): Promise<Attempt> {
  if (a.retryAttempt === 0) return insertFirstAttempt(db, a);
  const claimedStatus = a.status === "to retry" ? DbStatus.failed : TO_DB[a.status];
  const data = {
    webhookId: a.webhookId,
    configId: a.config.id,
    config: configSnapshot(a.config),
    eventId: a.eventId,
    statusCode: a.statusCode,
    durationMs: a.durationMs ?? null,
    retryAttempt: a.retryAttempt,
    status: TO_DB[a.status],
    nextRetryAfter: a.nextRetryAfter,
    error: a.error,
    replayOf: a.replayOf ?? null,
    workflowId: a.workflowId ?? null,
    batchId: a.batchId ?? null,
  };
  try {
    return await db.prisma.$transaction(async (tx) => {
      const row = await tx.attempt.create({ data });
      // Only the rows this retry claimed: those of earlier attempts.
      await tx.attempt.updateMany({
        where: { webhookId: a.webhookId, status: DbStatus.retrying, retryAttempt: { lt: a.retryAttempt } },
        data: { status: claimedStatus, updatedAt: new Date() },
      });
      await tx.$executeRawUnsafe(CLAIM_DONE, a.webhookId, a.retryAttempt);
      return row;
    });
  } catch (err) {
    if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === "P2002") {
      const existing = await findAttempt(db.prisma, a.webhookId, a.retryAttempt);
      if (existing) return existing;
    }
    throw err;
  }
}

/**
 * The retry claim (docs/spec-rules.md#retry-claim) before attempt `retryAttempt`: this webhook's
 * queued row (of an earlier attempt) becomes `retrying`; a row already `retrying` stays claimed, as
 * after a restart. Returns when the claimed retry was due, or undefined when nothing was queued any
 * more: somebody closed the delivery, and the workflow must not send again.
 */
export async function claimForRetry(
  db: PrismaClient,
  webhookId: string,
  retryAttempt: number,
): Promise<{ dueAt: Date | null } | undefined> {
  const rows = await db.$queryRaw<{ due_at: Date | null }[]>`
    UPDATE attempts SET status = 'retrying', updated_at = now()
     WHERE webhook_id = ${webhookId}::uuid AND status IN ('to retry', 'retrying')
       AND retry_attempt < ${retryAttempt}
    RETURNING next_retry_after AS due_at`;
  if (rows.length === 0) return undefined;
  const due = rows.map((r) => r.due_at?.getTime()).filter((t) => t !== undefined);
  return { dueAt: due.length ? new Date(Math.max(...due)) : null };
}

/**
 * The row claimed for attempt `retryAttempt` goes back to `to retry` until `at` (the rate
 * limit service said wait). Only a row of an earlier attempt, and never once attempt
 * `retryAttempt` is written: a late execution of a send cannot queue a delivery again.
 */
export async function requeueClaimed(
  db: PrismaClient,
  webhookId: string,
  retryAttempt: number,
  at: Date,
): Promise<number> {
  return db.$executeRaw`
    UPDATE attempts SET status = 'to retry', next_retry_after = ${at}, updated_at = now()
     WHERE webhook_id = ${webhookId}::uuid AND status = 'retrying' AND retry_attempt < ${retryAttempt}
       AND NOT EXISTS (SELECT 1 FROM attempts w
                        WHERE w.webhook_id = ${webhookId}::uuid AND w.retry_attempt >= ${retryAttempt})`;
}

/** Why the delivery's newest row ended, when something other than its workflow closed it. */
export async function closedReason(db: PrismaClient, webhookId: string): Promise<string> {
  const last = await db.attempt.findFirst({ where: { webhookId }, orderBy: { retryAttempt: "desc" } });
  return last?.error ?? "closed outside its workflow";
}

/** Ends a delivery without a further send: its queued or claimed rows become `failed`. */
export async function failPending(db: PrismaClient, webhookId: string, reason: string): Promise<number> {
  const { count } = await db.attempt.updateMany({
    where: { webhookId, status: { in: [DbStatus.toRetry, DbStatus.retrying] } },
    data: { status: DbStatus.failed, error: reason, updatedAt: new Date() },
  });
  return count;
}
