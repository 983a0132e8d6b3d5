import {
  CancellationScope,
  condition,
  continueAsNew,
  defineSignal,
  isCancellation,
  ParentClosePolicy,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  startChild,
  upsertSearchAttributes,
  uuid4,
  workflowInfo,
} from "@temporalio/workflow";
import type { BatchActivities, BatchMember, BatchOutcome } from "../activities/batch-activities.js";
import type { DeliveryPolicy } from "../activities/delivery-types.js";
import { LEGACY_SEND_BUDGET_MS, sendBudgetMs } from "../activities/send-budget.js";
import { batchWorkflowId } from "../core/batching.js";
import { WebhookDeliveryStatus } from "./search-attributes.js";

// Batched delivery (docs/webhooks/ordering-and-batching.md#batched-delivery): one collector workflow per batched config
// (id batch:<configId>) gathers the config's new events, fed by signal-with-start from the
// one start path, and hands each batch (maxEvents events, or fewer once the first waited
// maxWaitMs) to a child workflow that POSTs it and retries it as a unit. The collector
// goes on collecting while batches are sent and retried.

/** One event of a batched config, as the start path signals it. */
export interface BatchItem extends BatchMember {}

export interface CollectorInput {
  configId: string;
  tenantId: string;
  maxEvents: number;
  maxWaitMs: number;
  policy: DeliveryPolicy;
  sendTaskQueue: string;
  /** Its batches ask the rate limit service before each POST (the starter had --ratelimit-addr). */
  rateLimited?: true;
  /** Carried over by continue-as-new. */
  queue?: BatchItem[];
  /** Webhook ids of the last events handed to a batch, so a redelivered event is ignored. */
  recent?: string[];
}

export interface BatchInput {
  batchId: string;
  configId: string;
  members: BatchMember[];
  policy: DeliveryPolicy;
  sendTaskQueue: string;
  rateLimited?: true;
}

/**
 * Adds an event to the next batch (ignored when the collector holds or handed it already).
 * Sent by releases before add-many; still handled for their signals in flight.
 */
export const addToBatchSignal = defineSignal<[BatchItem]>("add");
/**
 * Adds several events, in order, each as `add` would: the start path sends the events that
 * arrived while its previous signal to this collector was in flight as one signal
 * (workers/collector-feed.ts), so a burst costs one RPC and one workflow task per group.
 */
export const addManyToBatchSignal = defineSignal<[BatchItem[]]>("add-many");
/**
 * The config was deactivated or deleted: the collected events close without a send; a
 * batch being retried closes its events at its next wake-up. The name is the delivery
 * workflow's close signal's, so workers/close-deliveries.ts signals both alike.
 */
export const closeBatchesSignal = defineSignal<[reason: string]>("close");

/** A collector with nothing collected this long ends (the next event starts it again). */
const IDLE_MS = 60_000;
/** Collectors that hand their events' waiting rows to each batch before starting it. */
export const HAND_ROWS_PATCH = "batch-hands-rows";

/** How many handed events' ids are kept for dedup; a later redelivery is refused by its unsent row. */
const RECENT_IDS = 5_000;
const MAX_HISTORY_EVENTS = 10_000;
const retry = { initialInterval: "1 second", backoffCoefficient: 2, maximumInterval: "1 minute" } as const;

export async function collectBatches(input: CollectorInput): Promise<void> {
  const queue = [...(input.queue ?? [])];
  const recent = [...(input.recent ?? [])];
  const ids = new Set([...queue.map((i) => i.webhookId), ...recent]);
  let closing: string | undefined;
  const add = (item: BatchItem) => {
    if (ids.has(item.webhookId)) return;
    ids.add(item.webhookId);
    queue.push(item);
  };
  setHandler(addToBatchSignal, add);
  setHandler(addManyToBatchSignal, (items) => {
    for (const item of items) add(item);
  });
  setHandler(closeBatchesSignal, (reason) => {
    closing ??= reason;
  });
  const { closeBatch } = proxyActivities<BatchActivities>({
    taskQueue: input.sendTaskQueue,
    startToCloseTimeout: "1 minute",
    retry,
  });
  const { handRowsToBatch } = proxyLocalActivities<BatchActivities>({
    startToCloseTimeout: "10 seconds",
    retry,
  });
  let sent = 0;
  for (;;) {
    if (closing) {
      const reason = closing;
      if (queue.length) await closeBatch({ webhookIds: queue.splice(0).map((i) => i.webhookId), reason });
      return;
    }
    if (queue.length === 0) {
      setCurrentDetails(`idle: ${sent} batches handed to their workflows in this run`);
      if (!(await condition(() => queue.length > 0 || closing !== undefined, IDLE_MS))) return;
      continue;
    }
    setCurrentDetails(`collecting: ${queue.length} of ${input.maxEvents} events`);
    await condition(() => queue.length >= input.maxEvents || closing !== undefined, input.maxWaitMs);
    if (closing) continue;
    const members = queue.splice(0, input.maxEvents);
    const batchId = uuid4();
    const workflowId = batchWorkflowId(input.configId, batchId);
    // Before the batch exists: reconciliation then finds its events' rows in its care, and
    // never adds them to a collector again (this one forgets them after an idle end).
    if (patched(HAND_ROWS_PATCH))
      await handRowsToBatch({ webhookIds: members.map((m) => m.webhookId), workflowId });
    await startChild(deliverBatch, {
      workflowId,
      taskQueue: workflowInfo().taskQueue,
      args: [
        {
          batchId,
          configId: input.configId,
          members,
          policy: input.policy,
          sendTaskQueue: input.sendTaskQueue,
          ...(input.rateLimited ? { rateLimited: true as const } : {}),
        },
      ],
      // A batch outlives its collector (idle end, continue-as-new): it has its own rows.
      parentClosePolicy: ParentClosePolicy.ABANDON,
      staticSummary: `batch of ${members.length} events`,
    });
    sent++;
    for (const m of members) recent.push(m.webhookId);
    while (recent.length > RECENT_IDS) ids.delete(recent.shift()!);
    const info = workflowInfo();
    if (info.continueAsNewSuggested || info.historyLength > MAX_HISTORY_EVENTS)
      return continueAsNew<typeof collectBatches>({ ...input, queue, recent });
  }
}

/**
 * Sends one batch and retries it as a unit under the config's retry policy, until success,
 * a permanent failure, the caps, or every event of it closed (each retry leaves out the
 * events closed meanwhile). Cancelling it closes its events `cancelled`.
 */
export async function deliverBatch(input: BatchInput): Promise<BatchOutcome> {
  const options = {
    taskQueue: input.sendTaskQueue,
    startToCloseTimeout: input.policy.sendTimeoutMs
      ? sendBudgetMs(input.policy.sendTimeoutMs)
      : LEGACY_SEND_BUDGET_MS,
    retry,
  };
  const { claimBatchRetry, closeBatch } = proxyActivities<BatchActivities>(options);
  // The send heartbeats through every step, as a delivery's (activities/send-pipeline.ts).
  const { sendBatch } = proxyActivities<BatchActivities>({ ...options, heartbeatTimeout: "20 seconds" });
  let closing: string | undefined;
  setHandler(closeBatchesSignal, (reason) => {
    closing ??= reason;
  });
  let members = input.members;
  const close = async (reason: string): Promise<BatchOutcome> => {
    await closeBatch({ webhookIds: members.map((m) => m.webhookId), reason });
    return { skipped: reason };
  };
  try {
    for (let retryAttempt = 0; ; retryAttempt++) {
      if (closing) return await close(closing);
      const batch = { ...input, members, retryAttempt };
      if (retryAttempt > 0) {
        const claim = await claimBatchRetry(batch);
        if ("reason" in claim) return { skipped: claim.reason };
        members = claim.members;
      }
      const outcome = await CancellationScope.nonCancellable(() => sendBatch({ ...batch, members }));
      if ("waitMs" in outcome) {
        // Not sent (rate limited): the same attempt again once the window allows it.
        setCurrentDetails(`${members.length} events: waiting ${outcome.waitMs} ms for the rate limit`);
        await condition(() => closing !== undefined, outcome.waitMs);
        retryAttempt--;
        continue;
      }
      upsertSearchAttributes([
        { key: WebhookDeliveryStatus, value: "status" in outcome ? outcome.status : "failed" },
      ]);
      if (!("status" in outcome) || outcome.status !== "to retry") {
        setCurrentDetails(
          `${members.length} events: ${"status" in outcome ? outcome.status : outcome.skipped}`,
        );
        return outcome;
      }
      setCurrentDetails(
        `${members.length} events: attempt ${retryAttempt + 1} got ${outcome.statusCode || outcome.error}; next try at ${outcome.nextRetryAfter}`,
      );
      await condition(
        () => closing !== undefined,
        Math.max(1, Date.parse(outcome.nextRetryAfter!) - Date.now()),
      );
    }
  } catch (err) {
    if (!isCancellation(err)) throw err;
    await CancellationScope.nonCancellable(() => close("cancelled"));
    throw err;
  }
}
