import { ApplicationFailure, Context } from "@temporalio/activity";
import type pg from "pg";
import type { PrismaClient } from "../common/db/database.js";
import type { Logger } from "../common/logger.js";
import { recoveriesFinished, recoveryDeliveries } from "../core/metrics.js";
import { orderingOf } from "../core/ordering.js";
import { replayWorkflowId } from "../core/replay-ids.js";
import { describeFailure, PermanentStartFailure, permanentFailureOf } from "../core/start-failures.js";
import { type DeliveryEvent, eventOfRow } from "../core/stored-events.js";
import type { Config, Recovery } from "../generated/prisma/client.js";

/** Failed deliveries taken up per activity call (one page of the walk). */
export const RECOVERY_PAGE = 100;

export interface RecoverPageInput {
  recoveryId: string;
  /** The last webhook id taken up; the walk goes on after it. */
  cursor: string;
}

export interface RecoverPageResult {
  cursor: string;
  done: boolean;
}

/**
 * An ordered config's walk goes by (first send, webhook id), written `<ISO time>|<id>`; a
 * plain id (the first cursor, or a walk begun before the config was ordered) starts over,
 * and the replays already started are found as such.
 */
interface OrderedCursor {
  at: Date;
  id: string;
}
const orderedCursor = (cursor: string): OrderedCursor => {
  const [at, id] = cursor.split("|");
  return id ? { at: new Date(at!), id } : { at: new Date(0), id: "00000000-0000-0000-0000-000000000000" };
};

interface Candidate {
  webhookId: string;
  eventId: string | null;
  payload: string | null;
}

/** Starts (idempotently) the delivery that replays `replayOf`; `started` false when it already ran. */
export type StartReplay = (
  config: Config,
  event: DeliveryEvent,
  workflowId: string,
  replayOf: string,
) => Promise<{ started: boolean }>;

/**
 * Deliveries of the config that ended failed in the window: their newest row is
 * `failed` (a running delivery always has a queued newest row), not cancelled by an
 * operator, and not replayed since (a replay carries the delivery on; if it failed,
 * the replay itself is the candidate).
 */
const candidates = (
  prisma: PrismaClient,
  configId: string,
  since: Date,
  until: Date,
  types: string[],
  cursor: string,
) =>
  prisma.$queryRaw<Candidate[]>`
    SELECT a.webhook_id::text AS "webhookId", a.event_id AS "eventId", a.payload
      FROM attempts a LEFT JOIN events e ON e.id = a.event_id
     WHERE a.config_id = ${configId}::uuid
       AND a.status = 'failed'
       AND a.updated_at >= ${since} AND a.updated_at < ${until}
       AND a.webhook_id > ${cursor}::uuid
       AND a.error IS DISTINCT FROM 'cancelled'
       AND NOT EXISTS (SELECT 1 FROM attempts n
                        WHERE n.webhook_id = a.webhook_id AND n.retry_attempt > a.retry_attempt)
       AND NOT EXISTS (SELECT 1 FROM attempts r WHERE r.replay_of = a.webhook_id)
       AND (cardinality(${types}::text[]) = 0 OR coalesce(e.type, a.payload::jsonb ->> 'type') = ANY(${types}::text[]))
     ORDER BY a.webhook_id
     LIMIT ${RECOVERY_PAGE}`;

/**
 * The same deliveries of an ordered config in the order they were first sent (its
 * attempt 0), which for one ordering key is the order they were accepted: replayed in
 * that order, they join their keys' queues in it (docs/webhooks/ordering-and-batching.md#ordered-delivery).
 */
const candidatesInOrder = (
  prisma: PrismaClient,
  configId: string,
  since: Date,
  until: Date,
  types: string[],
  cursor: OrderedCursor,
) =>
  prisma.$queryRaw<(Candidate & { firstSentAt: Date })[]>`
    SELECT a.webhook_id::text AS "webhookId", a.event_id AS "eventId", a.payload, f.created_at AS "firstSentAt"
      FROM attempts a LEFT JOIN events e ON e.id = a.event_id
      JOIN attempts f ON f.webhook_id = a.webhook_id AND f.retry_attempt = 0
     WHERE a.config_id = ${configId}::uuid
       AND a.status = 'failed'
       AND a.updated_at >= ${since} AND a.updated_at < ${until}
       AND (f.created_at, a.webhook_id) > (${cursor.at}, ${cursor.id}::uuid)
       AND a.error IS DISTINCT FROM 'cancelled'
       AND NOT EXISTS (SELECT 1 FROM attempts n
                        WHERE n.webhook_id = a.webhook_id AND n.retry_attempt > a.retry_attempt)
       AND NOT EXISTS (SELECT 1 FROM attempts r WHERE r.replay_of = a.webhook_id)
       AND (cardinality(${types}::text[]) = 0 OR coalesce(e.type, a.payload::jsonb ->> 'type') = ANY(${types}::text[]))
     ORDER BY f.created_at, a.webhook_id
     LIMIT ${RECOVERY_PAGE}`;

/**
 * Starts the replays of a page's deliveries, at most `ratePerSecond` a second: counts of
 * started, already started and failed starts, and the last failure.
 */
async function replayPage(
  deps: RecoveryDeps,
  recovery: Recovery,
  config: Config,
  page: Candidate[],
): Promise<{
  counts: Record<"started" | "already_started" | "failed", number>;
  lastError: string | undefined;
}> {
  const { pool, logger, startReplay } = deps;
  const spacingMs = 1000 / deps.ratePerSecond;
  const counts = { started: 0, already_started: 0, failed: 0 };
  let lastError: string | undefined;
  let next = Date.now();
  for (const c of page) {
    const wait = next - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    next = Math.max(next, Date.now()) + spacingMs;
    Context.current().heartbeat(c.webhookId);
    try {
      const event = await eventOfRow(pool, c);
      if (!event) throw new PermanentStartFailure("its event is no longer stored", "event");
      const workflowId = replayWorkflowId(c.webhookId, recovery.idempotencyKey);
      const { started } = await startReplay(config, event, workflowId, c.webhookId);
      counts[started ? "started" : "already_started"]++;
    } catch (err) {
      const permanent = permanentFailureOf(err);
      // Temporal or the database unavailable: the page is tried again (the starts
      // made so far are found as already started).
      if (!permanent) throw err;
      counts.failed++;
      lastError = `${c.webhookId}: ${describeFailure(permanent)}`;
      logger.warn(
        { recovery: recovery.id, webhookId: c.webhookId, err: lastError },
        "recovery: replay cannot start",
      );
    }
  }
  return { counts, lastError };
}

export interface RecoveryDeps {
  prisma: PrismaClient;
  pool: pg.Pool;
  logger: Logger;
  /** Starts one replayed delivery; the worker passes the consumer's own start. */
  startReplay: StartReplay;
  ratePerSecond: number;
}

/**
 * Activities of a bulk recovery (workflows/recovery.ts). A page replays the config's
 * failed deliveries after the cursor, in webhook id order (an ordered config's in the
 * order they were first sent), through the replay path
 * (same workflow ids as POST /webhooks/{id}/replay with the recovery's key), starting
 * at most `ratePerSecond` of them a second so that new deliveries keep their capacity.
 */
export function createRecoveryActivities(deps: RecoveryDeps) {
  const { prisma, logger } = deps;

  return {
    async recoverPage({ recoveryId, cursor }: RecoverPageInput): Promise<RecoverPageResult> {
      const recovery = await prisma.recovery.findUnique({ where: { id: recoveryId } });
      if (!recovery) throw ApplicationFailure.nonRetryable(`recovery ${recoveryId} no longer exists`);
      const config = await prisma.config.findUnique({ where: { id: recovery.configId } });
      if (!config) throw ApplicationFailure.nonRetryable(`config ${recovery.configId} was deleted`);
      if (!config.active)
        throw ApplicationFailure.nonRetryable(
          `config ${config.id} is inactive: activate it and recover again`,
        );

      const ordered = orderingOf(config) !== null;
      const page: (Candidate & { firstSentAt?: Date })[] = ordered
        ? await candidatesInOrder(
            prisma,
            config.id,
            recovery.since,
            recovery.until,
            recovery.eventTypes,
            orderedCursor(cursor),
          )
        : await candidates(
            prisma,
            config.id,
            recovery.since,
            recovery.until,
            recovery.eventTypes,
            cursor.split("|").at(-1)!,
          );
      const { counts, lastError } = await replayPage(deps, recovery, config, page);
      for (const [outcome, n] of Object.entries(counts)) if (n) recoveryDeliveries.inc({ outcome }, n);
      await prisma.recovery.update({
        where: { id: recoveryId },
        data: {
          matched: { increment: page.length },
          started: { increment: counts.started },
          alreadyStarted: { increment: counts.already_started },
          failedToStart: { increment: counts.failed },
          ...(lastError ? { lastError } : {}),
          updatedAt: new Date(),
        },
      });
      const last = page.at(-1);
      const after = !last
        ? cursor
        : last.firstSentAt
          ? `${last.firstSentAt.toISOString()}|${last.webhookId}`
          : last.webhookId;
      return { cursor: after, done: page.length < RECOVERY_PAGE };
    },

    async finishRecovery({ recoveryId, error }: { recoveryId: string; error?: string }): Promise<void> {
      const state = error ? "failed" : "done";
      const now = new Date();
      await prisma.recovery.update({
        where: { id: recoveryId },
        data: { state, finishedAt: now, updatedAt: now, ...(error ? { lastError: error } : {}) },
      });
      recoveriesFinished.inc({ state });
      logger.info({ recovery: recoveryId, state, ...(error ? { err: error } : {}) }, "recovery finished");
    },
  };
}

export type RecoveryActivities = ReturnType<typeof createRecoveryActivities>;
