import type { PrismaClient } from "../common/db/database.js";
import type { Logger } from "../common/logger.js";
import { UNREFERENCED_EVENT_MS } from "../core/stored-events.js";

/** Rows per statement, so cleanup never holds long locks on a big table. */
export const MAINTENANCE_BATCH = 5000;

export interface RetentionInput {
  successDelayMs: number;
  failedDelayMs: number;
  /** Absent in runs a process of an earlier version scheduled: dead letters are kept. */
  deadLetterDelayMs?: number;
}

/** How long an idle ordering key's row stays (its `last_seq` is what a new event compares against). */
const IDLE_KEY_MS = 24 * 3600 * 1000;

/** Runs a DELETE of at most MAINTENANCE_BATCH rows until it deletes fewer; the total deleted. */
async function inBatches(deleteBatch: () => Promise<number>): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await deleteBatch();
    total += deleted;
    if (deleted < MAINTENANCE_BATCH) return total;
  }
}

/**
 * Activities of the retention schedule. Queued rows are never touched here:
 * they belong to their workflow, or to reconciliation when it is lost
 * (workers/reconciliation.ts).
 */
export function createMaintenanceActivities({ prisma, logger }: { prisma: PrismaClient; logger: Logger }) {
  async function purge(status: "success" | "failed", olderThanMs: number): Promise<number> {
    if (olderThanMs <= 0) return 0; // 0 disables the purge of that status
    const cutoff = new Date(Date.now() - olderThanMs);
    // Failed rows stay while their delivery still has a queued or claimed row.
    return inBatches(
      () => prisma.$executeRaw`
        DELETE FROM attempts WHERE id IN (
          SELECT a.id FROM attempts a
           WHERE a.status = ${status}::attempt_status AND a.updated_at < ${cutoff}
             AND NOT EXISTS (SELECT 1 FROM attempts p WHERE p.webhook_id = a.webhook_id
                              AND p.status IN ('to retry', 'retrying'))
           LIMIT ${MAINTENANCE_BATCH} FOR UPDATE SKIP LOCKED)`,
    );
  }

  /**
   * Send claims (activities/send-claims.ts) matter only while an execution of their send
   * may still run: a day after they were taken, those no longer held are removed.
   */
  function purgeClaims(): Promise<number> {
    return inBatches(
      () => prisma.$executeRaw`
        DELETE FROM send_claims WHERE (webhook_id, retry_attempt) IN (
          SELECT webhook_id, retry_attempt FROM send_claims
           WHERE taken_at < now() - interval '1 day' AND (expires_at = 'infinity' OR expires_at < now())
           LIMIT ${MAINTENANCE_BATCH} FOR UPDATE SKIP LOCKED)`,
    );
  }

  /**
   * Unsent rows (unsent-deliveries.ts) of deliveries that sent or were closed, kept as long
   * as failed attempts are, and never while the delivery still has a queued row.
   */
  async function purgeUnsent(olderThanMs: number): Promise<number> {
    if (olderThanMs <= 0) return 0;
    const cutoff = new Date(Date.now() - olderThanMs);
    return inBatches(
      () => prisma.$executeRaw`
        DELETE FROM unsent_deliveries WHERE webhook_id IN (
          SELECT u.webhook_id FROM unsent_deliveries u
           WHERE u.state <> 'waiting' AND u.updated_at < ${cutoff}
             AND NOT EXISTS (SELECT 1 FROM attempts p WHERE p.webhook_id = u.webhook_id
                              AND p.status IN ('to retry', 'retrying'))
           LIMIT ${MAINTENANCE_BATCH} FOR UPDATE SKIP LOCKED)`,
    );
  }

  /**
   * Stored events (core/stored-events.ts) no attempt or unsent row references any more,
   * once UNREFERENCED_EVENT_MS old: an event lives as long as the rows that sent it, and a
   * just-accepted one is never taken before its first send writes its row.
   */
  function purgeEvents(): Promise<number> {
    const cutoff = new Date(Date.now() - UNREFERENCED_EVENT_MS);
    return inBatches(
      () => prisma.$executeRaw`
        DELETE FROM events WHERE id IN (
          SELECT e.id FROM events e
           WHERE e.created_at < ${cutoff}
             AND NOT EXISTS (SELECT 1 FROM attempts a WHERE a.event_id = e.id)
             AND NOT EXISTS (SELECT 1 FROM unsent_deliveries u WHERE u.event_id = e.id)
           LIMIT ${MAINTENANCE_BATCH} FOR UPDATE SKIP LOCKED)`,
    );
  }

  return {
    async purgeFinishedAttempts(input: RetentionInput): Promise<{
      success: number;
      failed: number;
      claims: number;
      unsent: number;
      events: number;
      idleKeys: number;
      deadLetters: number;
    }> {
      const result = {
        success: await purge("success", input.successDelayMs),
        failed: await purge("failed", input.failedDelayMs),
        claims: await purgeClaims(),
        unsent: await purgeUnsent(input.failedDelayMs),
        // After the rows: an event whose last row went just now goes in the same run.
        events: await purgeEvents(),
        idleKeys: await purgeIdleKeys(prisma, IDLE_KEY_MS),
        deadLetters: await purgeDeadLetters(prisma, input.deadLetterDelayMs ?? 0),
      };
      if (Object.values(result).some((n) => n > 0)) logger.info(result, "retention: attempts purged");
      return result;
    },
  };
}

export type MaintenanceActivities = ReturnType<typeof createMaintenanceActivities>;

/**
 * Ordering keys idle this long with nothing in their backlog (a key used once, such as an
 * order id, would otherwise keep its row for good); the next event of one makes it again.
 */
function purgeIdleKeys(prisma: PrismaClient, olderThanMs: number): Promise<number> {
  const cutoff = new Date(Date.now() - olderThanMs);
  return inBatches(
    () => prisma.$executeRaw`
      DELETE FROM ordering_keys WHERE (config_id, ordering_key) IN (
        SELECT k.config_id, k.ordering_key FROM ordering_keys k
         WHERE k.state = 'idle' AND k.updated_at < ${cutoff}
           AND NOT EXISTS (SELECT 1 FROM ordered_backlog b WHERE b.sequencer_id = k.workflow_id)
         LIMIT ${MAINTENANCE_BATCH} FOR UPDATE SKIP LOCKED)`,
  );
}

/**
 * Dead letters (workers/dead-letter-rows.ts) untouched this long, whatever their status: a
 * replayed one is done with, and one nobody replayed in that time is the operator's to keep
 * with a longer --retention-dead-letter-delay (0 keeps them all).
 */
function purgeDeadLetters(prisma: PrismaClient, olderThanMs: number): Promise<number> {
  if (olderThanMs <= 0) return Promise.resolve(0);
  const cutoff = new Date(Date.now() - olderThanMs);
  return inBatches(
    () => prisma.$executeRaw`
      DELETE FROM dead_letters WHERE id IN (
        SELECT id FROM dead_letters WHERE updated_at < ${cutoff}
         LIMIT ${MAINTENANCE_BATCH} FOR UPDATE SKIP LOCKED)`,
  );
}
