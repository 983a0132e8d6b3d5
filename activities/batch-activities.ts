import { findConfig } from "../core/config-rows.js";
import { claimForRetry, firstAttemptAt } from "./attempts-store.js";
import { sendBatch } from "./batch-send.js";
import type { BatchDeps, BatchMember, BatchSendInput } from "./batch-types.js";
import { closeDeliveries } from "./close-deliveries.js";
import { whyNoFurtherTry } from "./delivery-policy.js";
import { heartbeating } from "./send-pipeline.js";
import { adoptIntoBatch } from "./unsent-deliveries.js";

// The activities of a batch (workflows/batch-delivery.ts): its send (batch-send.ts), the
// claim before a re-send, the hand-over of rows to a batch's workflow, and its close.

export type { BatchDeps, BatchMember, BatchOutcome, BatchSendInput } from "./batch-types.js";

export function createBatchActivities(deps: BatchDeps) {
  const { prisma, pool, logger } = deps;
  return {
    sendBatch: (input: BatchSendInput) => heartbeating(() => sendBatch(deps, input)),

    /**
     * Before a batch's re-send: claims each event's queued row. Events closed meanwhile (a
     * cancel, reconciliation) leave the batch; the caps are the first event's (all share them).
     */
    async claimBatchRetry(input: BatchSendInput): Promise<{ members: BatchMember[] } | { reason: string }> {
      const members: BatchMember[] = [];
      let dueAt: number | undefined;
      for (const m of input.members) {
        const claimed = await claimForRetry(prisma, m.webhookId, input.retryAttempt);
        if (!claimed) continue;
        members.push(m);
        if (claimed.dueAt) dueAt = Math.max(dueAt ?? 0, claimed.dueAt.getTime());
      }
      if (members.length === 0) return { reason: "every event of the batch was closed" };
      const now = Date.now();
      const reason = whyNoFurtherTry({
        config: await findConfig(pool, input.configId),
        retryAttempt: input.retryAttempt,
        policy: input.policy,
        firstAttemptAt: await firstAttemptAt(prisma, members[0]!.webhookId),
        now: dueAt ? Math.min(now, dueAt) : now,
      });
      if (reason === undefined) return { members };
      await closeDeliveries(
        deps,
        members.map((m) => m.webhookId),
        reason,
      );
      return { reason };
    },

    /**
     * Run by the collector (a local activity) before it starts a batch's workflow: the events'
     * waiting rows name that workflow from then on (activities/unsent-deliveries.ts says why).
     */
    async handRowsToBatch({
      webhookIds,
      workflowId,
    }: {
      webhookIds: string[];
      workflowId: string;
    }): Promise<void> {
      await adoptIntoBatch(pool, webhookIds, workflowId);
    },

    /** Ends the batch's events without a send (cancel, config gone, collector closed). */
    async closeBatch({ webhookIds, reason }: { webhookIds: string[]; reason: string }): Promise<void> {
      await closeDeliveries(deps, webhookIds, reason);
      logger.info({ closed: webhookIds.length, reason }, "batched deliveries closed");
    },
  };
}

export type BatchActivities = ReturnType<typeof createBatchActivities>;
