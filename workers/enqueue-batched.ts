// A batched config's new delivery joins its config's next batch: signal-with-start of the
// config's collector (workflows/batch-delivery.ts), grouped with the other events bound for
// it meanwhile (workers/collector-feed.ts). Called by workers/start-delivery.ts only.
import type { DeliveryInput } from "../activities/delivery-types.js";
import { type Batch, batchCollectorId } from "../core/batching.js";
import type { ProcessContext } from "../core/process-context.js";
import { summary } from "../core/start-limits.js";
import type { DeliveryEvent } from "../core/stored-events.js";
import type { Config } from "../generated/prisma/client.js";
import { addManyToBatchSignal, collectBatches } from "../workflows/batch-delivery.js";
import { WebhookConfigId, WebhookDeliveryStatus, WebhookTenantId } from "../workflows/search-attributes.js";
import { feedCollector } from "./collector-feed.js";

export async function enqueueBatched(
  ctx: ProcessContext,
  config: Config,
  batch: Batch,
  event: DeliveryEvent,
  delivery: { workflowId: string; input: DeliveryInput; host: string; restored: boolean },
): Promise<{ started: boolean }> {
  const acceptedAt = new Date(delivery.input.acceptedAt ?? Date.now());
  const item = {
    webhookId: delivery.input.webhookId,
    eventRef: event.ref,
    acceptedAt: acceptedAt.toISOString(),
  };
  // Before the signal, in the same group (workers/collector-feed.ts): a collected delivery
  // has a row while it waits, naming its own (never started) delivery workflow id, so
  // reconciliation, finding no such workflow once the row is overdue, adds it again (the
  // collector ignores what it holds or handed on). A delivery accepted before keeps its row
  // and is signalled again all the same (the first signal may never have left).
  const wait = delivery.restored
    ? null
    : {
        webhookId: delivery.input.webhookId,
        configId: config.id,
        workflowId: delivery.workflowId,
        eventId: event.ref.id,
        acceptedAt,
        reason: `waiting for its batch (up to ${batch.maxEvents} events or ${batch.maxWaitMs} ms)`,
        nextTryAt: new Date(acceptedAt.getTime() + batch.maxWaitMs),
      };
  const collectorId = batchCollectorId(config.id);
  const started = await feedCollector(ctx.db.pool, collectorId, { item, wait }, async (items) => {
    await ctx.temporal.workflow.signalWithStart(collectBatches, {
      taskQueue: ctx.options.taskQueue,
      workflowId: collectorId,
      args: [
        {
          configId: config.id,
          tenantId: config.tenantId,
          maxEvents: batch.maxEvents,
          maxWaitMs: batch.maxWaitMs,
          policy: delivery.input.policy,
          sendTaskQueue: delivery.input.sendTaskQueue,
          ...(delivery.input.rateLimited ? { rateLimited: true as const } : {}),
        },
      ],
      signal: addManyToBatchSignal,
      signalArgs: [items],
      staticSummary: summary(`batches of up to ${batch.maxEvents} → ${delivery.host}`),
      typedSearchAttributes: [
        { key: WebhookConfigId, value: config.id },
        { key: WebhookDeliveryStatus, value: "active" },
        { key: WebhookTenantId, value: config.tenantId },
      ],
    });
  });
  return { started };
}
