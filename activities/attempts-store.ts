import { randomUUID } from "node:crypto";
import type { Database, PrismaClient } from "../common/db/database.js";
import type { Attempt, Config } from "../generated/prisma/client.js";
import { AttemptStatus as DbStatus, type Prisma } from "../generated/prisma/client.js";
import type { AttemptExchange } from "./attempt-exchange.js";
import type { AttemptStatus, AttemptSummary } from "./delivery-types.js";

// The attempts table as the delivery workflow mirrors it: every transition of
// the attempt state table (docs/spec-rules.md#attempt-states) is one of these writes.

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
  /** The headers sent and an excerpt of the answer (activities/attempt-exchange.ts); absent when nothing was sent. */
  exchange?: AttemptExchange | null | undefined;
}

/** The attempts table's columns in the shape of Prisma's Attempt (its enum names, not the stored values). */
const ATTEMPT_COLUMNS = `id, webhook_id AS "webhookId", config_id AS "configId", config, payload,
  event_id AS "eventId", status_code AS "statusCode", duration_ms AS "durationMs", retry_attempt AS "retryAttempt",
  CASE status WHEN 'to retry' THEN 'toRetry' ELSE status::text END AS status,
  next_retry_after AS "nextRetryAfter", error, replay_of AS "replayOf", workflow_id AS "workflowId",
  batch_id AS "batchId", exchange, created_at AS "createdAt", updated_at AS "updatedAt"`;

/** What the rows of one send share: all but each delivery's webhook, event and replay. */
export type SharedAttempt = Omit<NewAttempt, "webhookId" | "eventId" | "replayOf">;

/** One delivery's part of a send's rows. */
export interface AttemptOf {
  webhookId: string;
  eventId: string;
  replayOf?: string | undefined;
}

/**
 * The attempt rows of one send, a delivery's or a batch's events', in one statement (every
 * delivery writes one; Prisma's cost per query is several times the round trip, see
 * core/config-rows.ts). In the same statement: each send claim ends (send-claims.ts); a
 * first attempt's waiting row becomes sent (unsent-deliveries.ts); a retry's claimed rows
 * (`retrying`, of earlier attempts) take the new status, or `failed` when the new one is
 * `to retry`, so only the newest row stays queued. One statement, so a re-run finds every
 * row of the send or none. Idempotent on (webhook_id, retry_attempt): rows already there
 * are kept. Returns the rows inserted.
 */
export async function recordAttempts(
  pool: Database["pool"],
  shared: SharedAttempt,
  events: readonly AttemptOf[],
): Promise<Attempt[]> {
  const { rows } = await pool.query<Attempt>({
    name: "attempts-record",
    text: `WITH new AS (SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::uuid[]) AS n(id, webhook_id, event_id, replay_of)),
        claim_done AS (UPDATE send_claims SET expires_at = 'infinity'
          WHERE webhook_id IN (SELECT webhook_id FROM new) AND retry_attempt = $5::int),
        unsent_sent AS (UPDATE unsent_deliveries SET state = 'sent', updated_at = now()
          WHERE $5::int = 0 AND webhook_id IN (SELECT webhook_id FROM new) AND state = 'waiting'),
        claimed_end AS (UPDATE attempts SET status = $15::attempt_status, updated_at = now()
          WHERE webhook_id IN (SELECT webhook_id FROM new) AND status = 'retrying' AND retry_attempt < $5::int)
      INSERT INTO attempts (id, webhook_id, config_id, config, event_id, status_code, duration_ms,
        retry_attempt, status, next_retry_after, error, replay_of, workflow_id, batch_id, exchange)
      SELECT n.id, n.webhook_id, $6::uuid, $7::jsonb, n.event_id, $8, $9, $5::int, $10::attempt_status, $11, $12,
             n.replay_of, $13, $14::uuid, $16::jsonb
        FROM new n
      ON CONFLICT (webhook_id, retry_attempt) DO NOTHING
      RETURNING ${ATTEMPT_COLUMNS}`,
    values: [
      events.map(() => randomUUID()),
      events.map((e) => e.webhookId),
      events.map((e) => e.eventId),
      events.map((e) => e.replayOf ?? null),
      shared.retryAttempt,
      shared.config.id,
      JSON.stringify(configSnapshot(shared.config)),
      shared.statusCode,
      shared.durationMs ?? null,
      shared.status,
      shared.nextRetryAfter,
      shared.error,
      shared.workflowId ?? null,
      shared.batchId ?? null,
      shared.status === "to retry" ? "failed" : shared.status,
      shared.exchange ? JSON.stringify(shared.exchange) : null,
    ],
  });
  return rows;
}

/** One delivery's attempt row (recordAttempts): the row written, or the one already there. */
export async function recordAttempt(db: Pick<Database, "prisma" | "pool">, a: NewAttempt): Promise<Attempt> {
  const { webhookId, eventId, replayOf, ...shared } = a;
  const [row] = await recordAttempts(db.pool, shared, [{ webhookId, eventId, replayOf }]);
  return row ?? (await findAttempt(db.prisma, webhookId, a.retryAttempt))!;
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
