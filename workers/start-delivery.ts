// Starting one delivery: the workflow of one event to one config, with its
// deterministic id, the policy of the worker's flags and the search attributes the
// Web UI filters on. The consumer, HTTP ingest, replays, recoveries and
// reconciliation's restarts all start deliveries here.
import { WorkflowExecutionAlreadyStartedError } from "@temporalio/client";
import type { DeliveryInput, DeliveryResume } from "../activities/delivery-types.js";
import { batchOf } from "../core/batching.js";
import { webhookIdFor } from "../core/event-message.js";
import { orderingOf } from "../core/ordering.js";
import type { ProcessContext } from "../core/process-context.js";
import { endpointHost } from "../core/start-failures.js";
import { keyword, summary } from "../core/start-limits.js";
import type { DeliveryEvent } from "../core/stored-events.js";
import type { Config } from "../generated/prisma/client.js";
import { deliverWebhook } from "../workflows/delivery.js";
import { deliveryAttributes } from "../workflows/search-attributes.js";
import { enqueueBatched } from "./enqueue-batched.js";
import { enqueueOrdered, waitsForItsTurn } from "./enqueue-ordered.js";
import type { Lane } from "./ordered-lanes.js";
import { deliveryTemplate } from "./start-delivery-policy.js";

/**
 * How long a start waits for a place among this process's deliveries in flight, and then
 * for a free workflow-task slot of its worker, before it goes ahead without. In a burst,
 * starts wait their turn (a consumer holds at most 64 messages, and keeps NATS from
 * redelivering them meanwhile); a worker whose slots stay busy (slow local sends) delays a
 * start by at most this for each, after which it queues in the server as it would without
 * the wait.
 */
const START_SLOT_WAIT_MS = 10_000;

export const deliveryWorkflowId = (configId: string, key: string) => `delivery:${configId}:${key}`;

/** How reconciliation restarts a delivery whose workflow was lost (see workers/reconciliation.ts). */
export interface RestartOptions {
  /** The delivery's webhook id (derived from the workflow id otherwise). */
  webhookId: string;
  resume: DeliveryResume;
  /** When the delivery was first accepted (its caps count from there). */
  acceptedAt?: string;
}

/** The delivery workflow's input for one stored event to one config. */
function deliveryInput(
  ctx: ProcessContext,
  config: Config,
  event: DeliveryEvent,
  webhookId: string,
  replayOf?: string,
  restart?: RestartOptions,
): DeliveryInput {
  return {
    webhookId,
    configId: config.id,
    tenantId: config.tenantId,
    eventRef: event.ref,
    ...deliveryTemplate(ctx),
    ...(replayOf ? { replayOf } : {}),
    acceptedAt: restart?.acceptedAt ?? new Date().toISOString(),
    ...(restart ? { resume: restart.resume } : {}),
  };
}

/**
 * Starts (idempotently) the delivery workflow of one stored event to one config. An
 * ordered config's new deliveries go to their key's backlog instead (workers/enqueue-ordered.ts),
 * where each runs as this same workflow, under this same id, once the one before it ended.
 */
export async function startDelivery(
  ctx: ProcessContext,
  config: Config,
  event: DeliveryEvent,
  workflowId: string,
  replayOf?: string,
  restart?: RestartOptions,
  /** An ordered delivery's place among its key's events (workers/ordered-lanes.ts). */
  lane?: Lane,
): Promise<{ webhookId: string; started: boolean; eager: boolean }> {
  const webhookId = restart?.webhookId ?? webhookIdFor(workflowId);
  const host = endpointHost(config);
  const ordering = orderingOf(config);
  // An ordered config's new deliveries join their key's backlog. A restart starts at once,
  // as below, when its turn had come; one behind its key's head waits for its turn.
  if (ordering && restart && (await waitsForItsTurn(ctx, webhookId)))
    return { webhookId, started: false, eager: false };
  if (ordering && !restart) {
    const input = deliveryInput(ctx, config, event, webhookId, replayOf);
    try {
      await lane?.turn;
      const { started } = await enqueueOrdered(ctx, config, event, { workflowId, input });
      return { webhookId, started, eager: false };
    } catch (err) {
      lane?.failed();
      throw err;
    }
  }
  // A batched config's new deliveries, and restarts of deliveries never sent, go to its
  // next batch; a replay, and a restart of a batch's retry, go alone (docs/webhooks/ordering-and-batching.md#batched-delivery).
  const batch = batchOf(config);
  if (batch && !ordering && !replayOf && (restart?.resume.retryAttempt ?? 0) === 0) {
    const input = deliveryInput(ctx, config, event, webhookId, replayOf, restart);
    const { started } = await enqueueBatched(ctx, config, batch, event, {
      workflowId,
      input,
      host,
      restored: restart !== undefined,
    });
    return { webhookId, started, eager: false };
  }
  const eager = ctx.eagerStarter;
  const slots = eager ? ctx.startSlots : undefined;
  const inFlight = eager ? ctx.inFlight : undefined;
  // First a place among the deliveries in flight, then a slot for the first task: a start
  // let through by its slot should not then hold that slot while it waits for a place.
  // Counted by an earlier start of the same delivery (a redelivered event), the entry is
  // that start's: this one, refused as a duplicate, must not remove it.
  const added = inFlight ? (await inFlight.reserve(workflowId, START_SLOT_WAIT_MS)).counted : false;
  let keep = false;
  if (slots) await slots.whenFree(START_SLOT_WAIT_MS);
  try {
    const handle = await (eager ?? ctx.temporal).workflow.start(deliverWebhook, {
      taskQueue: ctx.options.taskQueue,
      workflowId,
      requestEagerStart: eager !== undefined,
      args: [deliveryInput(ctx, config, event, webhookId, replayOf, restart)],
      // A restart may reuse the id of its closed workflow; a new delivery never does.
      workflowIdReusePolicy: restart ? "ALLOW_DUPLICATE" : "REJECT_DUPLICATE",
      // Shortened to Temporal's limits; the input carries the event's reference only.
      staticSummary: summary(`${event.type} → ${host}`),
      typedSearchAttributes: deliveryAttributes({
        configId: config.id,
        webhookId,
        eventType: keyword(event.type),
        endpointHost: keyword(host),
        status: restart ? "to retry" : "pending",
        attempts: restart?.resume.attempts.length ?? 0,
        tenantId: config.tenantId,
      }),
    });
    // Its workflow runs here only when started eagerly; elsewhere its sends count there.
    keep = handle.eagerlyStarted;
    return { webhookId, started: true, eager: handle.eagerlyStarted };
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError)
      return { webhookId, started: false, eager: false };
    throw err;
  } finally {
    slots?.started();
    if (added && !keep) inFlight?.remove(workflowId);
  }
}
