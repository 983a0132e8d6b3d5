// An ordered config's new delivery joins its key's queue: signal-with-start of the key's
// workflow (workflows/ordered-delivery.ts), which runs it as a child under its own
// delivery workflow id once the delivery before it ended. Called by workers/start-delivery.ts only.
import type { DeliveryInput } from "../activities/delivery-types.js";
import { recordQueued } from "../activities/unsent-deliveries.js";
import { batchOf } from "../core/batching.js";
import { type Ordering, orderedWorkflowId, orderingKeyOf } from "../core/ordering.js";
import type { ProcessContext } from "../core/process-context.js";
import { keyword, summary } from "../core/start-limits.js";
import type { DeliveryEvent } from "../core/stored-events.js";
import type { Config } from "../generated/prisma/client.js";
import { enqueueSignal, orderedDelivery } from "../workflows/ordered-delivery.js";
import { WebhookConfigId, WebhookDeliveryStatus, WebhookTenantId } from "../workflows/search-attributes.js";

export async function enqueueOrdered(
  ctx: ProcessContext,
  config: Config,
  ordering: Ordering,
  event: DeliveryEvent,
  delivery: { workflowId: string; input: DeliveryInput; host: string; restored?: boolean },
): Promise<{ started: boolean }> {
  const key = orderingKeyOf(config.id, event.orderingKey);
  const keyWorkflowId = orderedWorkflowId(config.id, key);
  const batch = batchOf(config);
  // Before the signal: a queued delivery has a row while it waits (reconcile-ordered.ts).
  // A delivery accepted before has its row already; it is signalled again all the same (the
  // first signal may never have left), and its key's workflow ignores what it holds.
  const started = delivery.restored
    ? true
    : await recordQueued(ctx.db.pool, {
        webhookId: delivery.input.webhookId,
        configId: config.id,
        workflowId: delivery.workflowId,
        eventId: event.ref.id,
        replayOf: delivery.input.replayOf,
        acceptedAt: new Date(delivery.input.acceptedAt ?? Date.now()),
        reason: `queued behind the earlier events of ordering key ${JSON.stringify(key.slice(0, 100))}`,
        orderingWorkflowId: keyWorkflowId,
      });
  await ctx.temporal.workflow.signalWithStart(orderedDelivery, {
    taskQueue: ctx.options.taskQueue,
    workflowId: keyWorkflowId,
    args: [
      {
        configId: config.id,
        tenantId: config.tenantId,
        orderingKey: key,
        onFailure: ordering.onFailure,
        // Read when the key's workflow starts: a change applies from its next run.
        ...(batch ? { batch } : {}),
      },
    ],
    signal: enqueueSignal,
    signalArgs: [
      {
        workflowId: delivery.workflowId,
        input: delivery.input,
        eventType: keyword(event.type),
        endpointHost: keyword(delivery.host),
        summary: summary(`${event.type} → ${delivery.host}`),
        ...(delivery.restored ? { restored: true } : {}),
      },
    ],
    staticSummary: summary(`ordered: key ${key} → ${delivery.host}`),
    typedSearchAttributes: [
      { key: WebhookConfigId, value: config.id },
      { key: WebhookDeliveryStatus, value: "active" },
      { key: WebhookTenantId, value: config.tenantId },
    ],
  });
  return { started };
}
