import { Context } from "@temporalio/activity";
import type { Logger } from "../common/logger.js";

/** Time kept back from the activity's start-to-close timeout, to fail cleanly before it runs out. */
const MARGIN_MS = 10_000;
const FIRST_WAIT_MS = 250;
const MAX_WAIT_MS = 2000;

/**
 * Runs the database writes that follow a POST until they succeed. Once the POST has
 * gone out, its answer exists only in this activity's memory: failing the activity
 * because the database is restarting or dropped a connection would have Temporal retry
 * it, and the retry POSTs the same attempt again (a PostgreSQL restart under 200
 * deliveries made 1 to 11 such duplicate POSTs, test/webhooks/failure-postgres.test.ts).
 * So the writes are tried again here, heartbeating, until `deadline` (ms since the
 * epoch) or the activity is cancelled; only then does the error go to Temporal as
 * before. `write` must be idempotent (attempt rows are, on (webhook_id, retry_attempt)).
 */
export async function writeAfterPost<T>(
  write: () => Promise<T>,
  deadline: number,
  logger: Logger,
  what: Record<string, unknown>,
): Promise<T> {
  const ctx = Context.current();
  for (let tries = 1, waitMs = FIRST_WAIT_MS; ; tries++, waitMs = Math.min(waitMs * 2, MAX_WAIT_MS)) {
    try {
      const written = await write();
      if (tries > 1) logger.info({ ...what, tries }, "attempt row written after the database came back");
      return written;
    } catch (err) {
      if (ctx.cancellationSignal.aborted || Date.now() + waitMs > deadline) throw err;
      if (tries === 1)
        logger.warn(
          { ...what, err: (err as Error).message },
          "attempt row not written after the POST: trying again without sending again",
        );
      if (!ctx.info.isLocal) ctx.heartbeat();
      await ctx.sleep(waitMs); // rejects when the activity is cancelled
    }
  }
}

/** Called as the activity starts: until when its writes after a POST may be tried again (its own time, less a margin). */
export const writeDeadline = (): number =>
  Date.now() + Context.current().info.startToCloseTimeoutMs - MARGIN_MS;
