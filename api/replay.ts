import type { PrismaClient } from "../common/db/database.js";
import type { ProcessContext } from "../core/process-context.js";
import { replayWorkflowId } from "../core/replay-ids.js";
import { eventOfRow } from "../core/stored-events.js";
import { startDelivery } from "../workers/start-delivery.js";
import { ApiError, notFound, validation } from "./errors.js";

export interface ReplayResult {
  webhookID: string;
  replayOf: string;
  workflowID: string;
  /** False when this idempotency key already replayed the webhook. */
  created: boolean;
}

export type Replayer = (webhookId: string, idempotencyKey: string | undefined) => Promise<ReplayResult>;

/**
 * A replay is a new delivery of the original event to the original config,
 * through a new workflow whose id derives from the original webhook and the
 * caller's Idempotency-Key: the same key never starts a second replay.
 */
export function createReplayer(ctx: ProcessContext, prisma: PrismaClient): Replayer {
  return async (webhookId, key) => {
    if (!key) throw validation("the Idempotency-Key header is required to replay a webhook");
    if (key.length > 255) throw validation("Idempotency-Key must be at most 255 characters");
    const first = await prisma.attempt.findFirst({ where: { webhookId }, orderBy: { retryAttempt: "asc" } });
    if (!first) throw notFound(`webhook ${webhookId} not found`);
    const config = await prisma.config.findUnique({ where: { id: first.configId } });
    if (!config) throw new ApiError(409, "CONFLICT", `config ${first.configId} of this webhook was deleted`);
    if (!config.active)
      throw new ApiError(409, "CONFLICT", `config ${config.id} is inactive; activate it to replay`);
    const event = await eventOfRow(ctx.db.pool, first);
    if (!event) throw new ApiError(409, "CONFLICT", `the event of webhook ${webhookId} is no longer stored`);
    const workflowId = replayWorkflowId(webhookId, key);
    const { webhookId: newId, started } = await startDelivery(ctx, config, event, workflowId, webhookId);
    return { webhookID: newId, replayOf: webhookId, workflowID: workflowId, created: started };
  };
}
