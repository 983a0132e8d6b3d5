// An ordered config's new delivery joins its key's backlog: one statement records its
// waiting row and its backlog row under the key's lock (function enqueue_ordered,
// migration 20261204000000), and the key's sequencer (workflows/key-sequencer.ts) is
// woken only when it went idle. Called by workers/start-delivery.ts only.
import type { DeliveryInput } from "../activities/delivery-types.js";
import { batchOf } from "../core/batching.js";
import { type Ordering, orderedWorkflowId, orderingKeyOf, orderingOf } from "../core/ordering.js";
import type { ProcessContext } from "../core/process-context.js";
import { endpointHost } from "../core/start-failures.js";
import { summary } from "../core/start-limits.js";
import type { DeliveryEvent } from "../core/stored-events.js";
import type { Config } from "../generated/prisma/client.js";
import {
  keySequencer,
  SEQUENCER_TASK_TIMEOUT,
  type SequencerInput,
  wakeSignal,
} from "../workflows/key-sequencer.js";
import { WebhookConfigId, WebhookDeliveryStatus, WebhookTenantId } from "../workflows/search-attributes.js";
import { deliveryTemplate } from "./start-delivery-policy.js";

export async function enqueueOrdered(
  ctx: ProcessContext,
  config: Config,
  event: DeliveryEvent,
  delivery: { workflowId: string; input: DeliveryInput },
): Promise<{ started: boolean }> {
  const key = orderingKeyOf(config.id, event.orderingKey);
  const sequencerId = orderedWorkflowId(config.id, key);
  const { rows } = await ctx.db.pool.query<{ inserted: boolean; wake: boolean }>({
    name: "enqueue-ordered",
    text: "SELECT inserted, wake FROM enqueue_ordered($1, $2, $3, $4, $5, $6, $7, $8, $9)",
    values: [
      delivery.input.webhookId,
      config.id,
      key,
      sequencerId,
      delivery.workflowId,
      event.ref.id,
      delivery.input.replayOf ?? null,
      new Date(delivery.input.acceptedAt ?? Date.now()),
      `queued behind the earlier events of ordering key ${JSON.stringify(key.slice(0, 100))}`,
    ],
  });
  const { inserted, wake } = rows[0]!;
  if (wake) await wakeSequencer(ctx, config, key);
  return { started: inserted };
}

/**
 * Whether the delivery waits behind an earlier one of its key's backlog: reconciliation
 * then leaves it to its sequencer (a lost batch's events restart one at a time, as each
 * becomes the head).
 */
export async function waitsForItsTurn(ctx: ProcessContext, webhookId: string): Promise<boolean> {
  const { rows } = await ctx.db.pool.query<{ behind: boolean }>({
    name: "ordered-behind",
    text: `SELECT EXISTS (SELECT 1 FROM ordered_backlog b
                            JOIN ordered_backlog e ON e.sequencer_id = b.sequencer_id AND e.seq < b.seq
                           WHERE b.webhook_id = $1::uuid) AS behind`,
    values: [webhookId],
  });
  return rows[0]!.behind;
}

/** Wakes the key's sequencer, starting it when none runs. */
export async function wakeSequencer(ctx: ProcessContext, config: Config, key: string): Promise<void> {
  const host = endpointHost(config);
  await ctx.temporal.workflow.signalWithStart(keySequencer, {
    taskQueue: ctx.options.taskQueue,
    workflowId: orderedWorkflowId(config.id, key),
    args: [sequencerInput(ctx, config, key, host)],
    signal: wakeSignal,
    signalArgs: [],
    workflowTaskTimeout: SEQUENCER_TASK_TIMEOUT,
    staticSummary: summary(`ordered: key ${key} → ${host}`),
    typedSearchAttributes: [
      { key: WebhookConfigId, value: config.id },
      { key: WebhookDeliveryStatus, value: "active" },
      { key: WebhookTenantId, value: config.tenantId },
    ],
  });
}

/** What a sequencer starts with: the config's ordering and batching, and this process's delivery flags. */
function sequencerInput(ctx: ProcessContext, config: Config, key: string, host: string): SequencerInput {
  const ordering: Ordering = orderingOf(config) ?? { enabled: true, onFailure: "skip" };
  const batch = batchOf(config);
  return {
    configId: config.id,
    tenantId: config.tenantId,
    orderingKey: key,
    onFailure: ordering.onFailure,
    // Read when the sequencer starts: a change applies from its next run.
    ...(batch ? { batch } : {}),
    endpointHost: host,
    template: deliveryTemplate(ctx),
  };
}
