import type { PrismaClient } from "../common/db/database.js";
import type { Attempt, Config } from "../generated/prisma/client.js";
import { AttemptStatus as DbStatus, Prisma } from "../generated/prisma/client.js";
import type { AttemptStatus, AttemptSummary } from "./delivery-types.js";

// The attempts table as the delivery workflow mirrors it: every transition of
// the spec's state table is one of these writes.

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

export async function firstAttemptAt(db: PrismaClient, webhookId: string): Promise<Date | undefined> {
  const first = await db.attempt.findFirst({ where: { webhookId }, orderBy: { retryAttempt: "asc" } });
  return first?.createdAt;
}

export interface NewAttempt {
  webhookId: string;
  config: Config;
  payload: string;
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
}

/**
 * Inserts the attempt and, in the same transaction, moves the rows this retry
 * claimed out of `retrying`: they take the new row's status, or `failed` when
 * the new row is `to retry`, so only the newest row stays queued. Idempotent on
 * (webhook_id, retry_attempt): a repeated call returns the stored row.
 */
export async function recordAttempt(db: PrismaClient, a: NewAttempt): Promise<Attempt> {
  const claimedStatus = a.status === "to retry" ? DbStatus.failed : TO_DB[a.status];
  const data = {
    webhookId: a.webhookId,
    configId: a.config.id,
    config: configSnapshot(a.config),
    payload: a.payload,
    statusCode: a.statusCode,
    durationMs: a.durationMs ?? null,
    retryAttempt: a.retryAttempt,
    status: TO_DB[a.status],
    nextRetryAfter: a.nextRetryAfter,
    error: a.error,
    replayOf: a.replayOf ?? null,
    workflowId: a.workflowId ?? null,
  };
  try {
    // A first attempt has claimed nothing: one INSERT, no transaction (half the
    // round trips of every delivery's commonest write).
    if (a.retryAttempt === 0) return await db.attempt.create({ data });
    return await db.$transaction(async (tx) => {
      const row = await tx.attempt.create({ data });
      await tx.attempt.updateMany({
        where: { webhookId: a.webhookId, status: DbStatus.retrying },
        data: { status: claimedStatus, updatedAt: new Date() },
      });
      return row;
    });
  } catch (err) {
    if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === "P2002") {
      const existing = await findAttempt(db, a.webhookId, a.retryAttempt);
      if (existing) return existing;
    }
    throw err;
  }
}

/**
 * The spec's claim: this webhook's queued row becomes `retrying` (a row already
 * `retrying` stays claimed, as after a restart). 0 means nothing was queued any
 * more: somebody closed the delivery, and the workflow must not send again.
 */
export async function claimForRetry(db: PrismaClient, webhookId: string): Promise<number> {
  const { count } = await db.attempt.updateMany({
    where: { webhookId, status: { in: [DbStatus.toRetry, DbStatus.retrying] } },
    data: { status: DbStatus.retrying, updatedAt: new Date() },
  });
  return count;
}

/** A claimed row goes back to `to retry` until `at` (the rate limit service said wait). */
export async function requeueClaimed(db: PrismaClient, webhookId: string, at: Date): Promise<number> {
  const { count } = await db.attempt.updateMany({
    where: { webhookId, status: DbStatus.retrying },
    data: { status: DbStatus.toRetry, nextRetryAfter: at, updatedAt: new Date() },
  });
  return count;
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
