import { setTimeout as sleep } from "node:timers/promises";
import { Context } from "@temporalio/activity";
import type { Logger } from "../common/logger.js";

/**
 * How long the writes after a POST are tried again, counted from the POST's answer: a
 * database restart or failover. Past the send claim's lease (send-claims.ts) without the
 * database, another execution may take the attempt over once it is back anyway.
 */
export const WRITE_AFTER_POST_MS = 60_000;
const FIRST_WAIT_MS = 250;
const MAX_WAIT_MS = 2000;

/**
 * Runs the database writes that follow a POST until they succeed. Once the POST has gone
 * out, its answer exists only in this process's memory, and the attempt's send claim
 * (renewed meanwhile by the send, send-pipeline.ts) is what holds every other execution of the same
 * attempt back: the sends queue's send of a local first send's attempt, Temporal's retry.
 * Given up, the claim lapses and that execution POSTs the attempt again. So the writes are
 * tried again for WRITE_AFTER_POST_MS from now, the POST's answer: not until a deadline
 * counted from the activity's start, which a slow POST on a loaded machine used up (a
 * local first send has its 1 s budget in all), and not only until the activity is
 * cancelled: a timed-out or detached send still holds the only record of its POST.
 * `write` must be idempotent (attempt rows are, on (webhook_id, retry_attempt)).
 */
export async function writeAfterPost<T>(
  write: () => Promise<T>,
  logger: Logger,
  what: Record<string, unknown>,
): Promise<T> {
  const ctx = Context.current();
  const deadline = Date.now() + WRITE_AFTER_POST_MS;
  for (let tries = 1, waitMs = FIRST_WAIT_MS; ; tries++, waitMs = Math.min(waitMs * 2, MAX_WAIT_MS)) {
    try {
      const written = await write();
      if (tries > 1) logger.info({ ...what, tries }, "attempt row written after the database came back");
      return written;
    } catch (err) {
      if (Date.now() + waitMs > deadline) {
        logger.error(
          { ...what, tries, err: (err as Error).message },
          "attempt row still not written after the POST: giving up, the attempt may be POSTed again once its send claim lapses",
        );
        throw err;
      }
      if (tries === 1)
        logger.warn(
          { ...what, err: (err as Error).message },
          "attempt row not written after the POST: trying again without sending again",
        );
      if (!ctx.info.isLocal && !ctx.cancellationSignal.aborted) ctx.heartbeat();
      await sleep(waitMs);
    }
  }
}
