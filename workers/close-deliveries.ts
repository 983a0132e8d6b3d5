import { type Client, WorkflowNotFoundError } from "@temporalio/client";
import type { PrismaClient } from "../common/db/database.js";
import type { Logger } from "../common/logger.js";
import { batchCollectorId } from "../core/batching.js";
import { AttemptStatus } from "../generated/prisma/client.js";
import { closeDeliverySignal } from "../workflows/delivery.js";
import { closeOrderedKeys } from "./ordering-keys.js";

/** Signals sent at once when a config's deliveries are closed. */
const SIGNAL_CONCURRENCY = 16;
export const QUEUED: AttemptStatus[] = [AttemptStatus.toRetry, AttemptStatus.retrying];

/**
 * Tells every queued delivery of the config to close with `reason` (after it was
 * deactivated, by the API or automatically, or deleted). Nothing here writes a row:
 * each workflow closes its own. One that cannot be signalled still ends at its next
 * wake-up, when its claim finds the config gone or inactive.
 */
export async function closeConfigDeliveries(
  temporal: Client,
  prisma: PrismaClient,
  logger: Logger,
  configId: string,
  reason: string,
): Promise<{ signalled: number; failed: number }> {
  const rows = await prisma.attempt.findMany({
    where: { configId, status: { in: QUEUED }, workflowId: { not: null } },
    select: { workflowId: true },
    distinct: ["workflowId"],
  });
  // And those whose first send waits, which have no attempt row yet.
  const unsent = await prisma.unsentDelivery.findMany({
    where: { configId, state: "waiting" },
    select: { workflowId: true },
  });
  const ids = [...new Set([...rows.map((r) => r.workflowId!), ...unsent.map((u) => u.workflowId)])];
  let failed = 0;
  for (let i = 0; i < ids.length; i += SIGNAL_CONCURRENCY) {
    await Promise.all(
      ids.slice(i, i + SIGNAL_CONCURRENCY).map((id) =>
        temporal.workflow
          .getHandle(id)
          .signal(closeDeliverySignal, reason)
          .catch((err: Error) => {
            // A missing workflow is reconciliation's to repair; anything else is logged.
            if (err instanceof WorkflowNotFoundError) return;
            failed++;
            logger.warn(
              { workflowId: id, configId, err: err.message },
              "could not signal a delivery to close",
            );
          }),
      ),
    );
  }
  // And the ordered keys' workflows, whose queued deliveries have no row yet.
  await closeOrderedKeys(temporal, prisma, configId, reason).catch((err: Error) => {
    failed++;
    logger.warn({ configId, err: err.message }, "could not tell ordered keys to close");
  });
  // And a batched config's collector, whose collected deliveries have no workflow of their
  // own (a batch being sent has its attempt rows, and is signalled above).
  await temporal.workflow
    .getHandle(batchCollectorId(configId))
    .signal(closeDeliverySignal, reason)
    .catch((err: Error) => {
      if (err instanceof WorkflowNotFoundError) return;
      failed++;
      logger.warn({ configId, err: err.message }, "could not tell the batch collector to close");
    });
  if (ids.length)
    logger.info({ configId, reason, signalled: ids.length - failed, failed }, "deliveries told to close");
  return { signalled: ids.length - failed, failed };
}
