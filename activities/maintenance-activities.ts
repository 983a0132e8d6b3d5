import type { PrismaClient } from "../common/db/database.js";
import type { Logger } from "../common/logger.js";

/** Rows per statement, so cleanup never holds long locks on a big table. */
export const MAINTENANCE_BATCH = 5000;
/** A row claimed (`retrying`) for longer than this belongs to a lost attempt. */
export const STALE_RETRYING_MS = 5 * 60_000;

export interface RetentionInput {
  successDelayMs: number;
  failedDelayMs: number;
}

/** Activities of the maintenance schedules: the spec's retention, orphan closing and stale recovery. */
export function createMaintenanceActivities({ prisma, logger }: { prisma: PrismaClient; logger: Logger }) {
  async function purge(status: "success" | "failed", olderThanMs: number): Promise<number> {
    if (olderThanMs <= 0) return 0; // 0 disables the purge of that status
    const cutoff = new Date(Date.now() - olderThanMs);
    let total = 0;
    for (;;) {
      // Failed rows stay while their delivery still has a queued or claimed row.
      const deleted = await prisma.$executeRaw`
        DELETE FROM attempts WHERE id IN (
          SELECT a.id FROM attempts a
           WHERE a.status = ${status}::attempt_status AND a.updated_at < ${cutoff}
             AND NOT EXISTS (SELECT 1 FROM attempts p WHERE p.webhook_id = a.webhook_id
                              AND p.status IN ('to retry', 'retrying'))
           LIMIT ${MAINTENANCE_BATCH} FOR UPDATE SKIP LOCKED)`;
      total += deleted;
      if (deleted < MAINTENANCE_BATCH) return total;
    }
  }

  return {
    async purgeFinishedAttempts(input: RetentionInput): Promise<{ success: number; failed: number }> {
      const result = {
        success: await purge("success", input.successDelayMs),
        failed: await purge("failed", input.failedDelayMs),
      };
      if (result.success || result.failed) logger.info(result, "retention: attempts purged");
      return result;
    },

    /** Queued rows whose config was deleted or deactivated are closed as failed. */
    async closeOrphanedAttempts(): Promise<number> {
      const closed = await prisma.$executeRaw`
        UPDATE attempts a SET status = 'failed', error = 'config deleted or inactive', updated_at = now()
         WHERE a.status = 'to retry'
           AND NOT EXISTS (SELECT 1 FROM configs c WHERE c.id = a.config_id AND c.active)`;
      if (closed) logger.info({ closed }, "retention: orphaned attempts closed");
      return closed;
    },

    /** Rows left `retrying` by a lost attempt go back to `to retry`. */
    async recoverStaleAttempts(): Promise<number> {
      const cutoff = new Date(Date.now() - STALE_RETRYING_MS);
      const recovered = await prisma.$executeRaw`
        UPDATE attempts SET status = 'to retry', updated_at = now()
         WHERE status = 'retrying' AND updated_at < ${cutoff}`;
      if (recovered) logger.warn({ recovered }, "stale retrying attempts recovered");
      return recovered;
    },
  };
}

export type MaintenanceActivities = ReturnType<typeof createMaintenanceActivities>;
