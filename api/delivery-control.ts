import { type Client, WorkflowNotFoundError } from "@temporalio/client";
import type { PrismaClient } from "../common/db/database.js";
import type { Logger } from "../common/logger.js";
import { closeConfigDeliveries, QUEUED } from "../workers/close-deliveries.js";
import { closeOrderedKeys, skipOrderingKeyHead } from "../workers/ordering-keys.js";
import { ApiError, notFound } from "./errors.js";

/**
 * How API actions reach running deliveries. The API never writes attempt rows
 * of a delivery: it asks the delivery's workflow, which closes them itself.
 */
export interface DeliveryControl {
  /**
   * Tells every queued delivery of the config to close with `reason` (after
   * deactivation or deletion). A delivery that cannot be signalled still ends at
   * its next wake-up, when its claim finds the config gone or inactive.
   */
  closeConfigDeliveries(configId: string, reason: string): Promise<{ signalled: number; failed: number }>;
  /** Requests cancellation of a queued or sending delivery; its workflow closes the row `failed: cancelled`. */
  cancel(webhookId: string): Promise<{ webhookID: string; workflowID: string; cancelRequested: true }>;
  /** A config stopped ordering: its blocked keys release, and their backlogs drain. */
  releaseOrderedKeys(configId: string, reason: string): Promise<number>;
  /** Releases a blocked ordering key (its sequencer's id, the head it releases); false when that workflow is gone. */
  skipOrderingKeyHead(workflowId: string, headWebhookId: string | null): Promise<boolean>;
}

export function createDeliveryControl(
  temporal: Client,
  prisma: PrismaClient,
  logger: Logger,
): DeliveryControl {
  return {
    closeConfigDeliveries: (configId, reason) =>
      closeConfigDeliveries(temporal, prisma, logger, configId, reason),

    releaseOrderedKeys: (configId, reason) => closeOrderedKeys(temporal, prisma, configId, reason),

    skipOrderingKeyHead: (workflowId, head) => skipOrderingKeyHead(temporal, workflowId, head),

    async cancel(webhookId) {
      const rows = await prisma.attempt.findMany({
        where: { webhookId },
        select: { status: true, workflowId: true },
        orderBy: { retryAttempt: "desc" },
      });
      // Not sent yet: its first send waits (activities/unsent-deliveries.ts).
      const unsent = rows.length ? null : await prisma.unsentDelivery.findUnique({ where: { webhookId } });
      if (rows.length === 0 && !unsent) throw notFound(`webhook ${webhookId} not found`);
      const workflowId = unsent?.workflowId ?? rows.find((r) => r.workflowId)?.workflowId;
      if (!workflowId)
        throw new ApiError(409, "CONFLICT", `webhook ${webhookId} is a test delivery; it has ended`);
      if (unsent ? unsent.state !== "waiting" : !rows.some((r) => QUEUED.includes(r.status)))
        throw new ApiError(409, "CONFLICT", `webhook ${webhookId} has already ended`);
      // A batched config's events are sent together (workflows/batch-delivery.ts): cancelling
      // one would cancel its whole batch, so it is refused rather than done wrong.
      const batched =
        workflowId.startsWith("batch:") ||
        (unsent !== null &&
          (await prisma.config.findUnique({ where: { id: unsent.configId }, select: { batch: true } }))
            ?.batch != null);
      if (batched)
        throw new ApiError(
          409,
          "CONFLICT",
          `webhook ${webhookId} is delivered in a batch with other events and cannot be cancelled on its own; ` +
            "deactivating the config closes the events still collected",
        );
      try {
        await temporal.workflow.getHandle(workflowId).cancel();
      } catch (err) {
        if (!(err instanceof WorkflowNotFoundError)) throw err;
        throw new ApiError(
          409,
          "CONFLICT",
          `the workflow of webhook ${webhookId} is gone; reconciliation will restart or close it`,
        );
      }
      logger.info({ webhookId, workflowId }, "delivery cancellation requested");
      return { webhookID: webhookId, workflowID: workflowId, cancelRequested: true };
    },
  };
}
