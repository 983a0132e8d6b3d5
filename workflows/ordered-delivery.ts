import { WorkflowExecutionAlreadyStartedError } from "@temporalio/common";
import {
  CancelledFailure,
  ChildWorkflowFailure,
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  executeChild,
  ParentClosePolicy,
  patched,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  TerminatedFailure,
  upsertSearchAttributes,
  workflowInfo,
} from "@temporalio/workflow";
import type { DeliveryInput, DeliveryResult, LocalFirstOutcome } from "../activities/delivery-types.js";
import type { OrderingActivities } from "../activities/ordering-activities.js";
import { deliverWebhook, firstSendSettledSignal, sendBudgetOf } from "./delivery.js";
import { sendFirstLocal } from "./first-send.js";
import { batchable, type OrderedBatching, runBatch } from "./ordered-batches.js";
import { deliveryAttributes, WebhookDeliveryStatus } from "./search-attributes.js";

// Ordered delivery (docs/webhooks/ordering-and-batching.md#ordered-delivery): one long-lived workflow per (config,
// ordering key) holds the key's queue. Each queued event runs as a child that is the
// delivery workflow unchanged, under the event's own deterministic workflow id, and the
// next starts only once it has ended: its webhook id, attempt rows, replay and cancel are
// those of any delivery, and a child start that finds its id used starts nothing twice.
// Since ORDERED_PATCHES.firstSendHere the key's workflow makes each head's first send itself
// (the delivery workflow's own local-first send) and starts the child only when the delivery
// goes on after it: most events then cost the key's workflow one local activity, no child.

/** Patch ids of this workflow (docs/webhooks/changing-the-workflow.md). */
export const ORDERED_PATCHES = {
  /** v2: the head's first send runs here; a child only for what follows it. */
  firstSendHere: "ordered-first-send-here",
  /** v3: a batched config's key sends its queue's head as one batch (workflows/ordered-batches.ts). */
  batches: "ordered-batches",
} as const;

/** One event waiting for its turn: the delivery it becomes, and what the Web UI shows of it. */
export interface OrderedItem {
  /** The delivery's own workflow id (workers/start-delivery.ts), also the queue's dedup key. */
  workflowId: string;
  input: DeliveryInput;
  eventType: string;
  endpointHost: string;
  summary: string;
  /**
   * Put back by reconciliation after Temporal lost the key's workflow, or a restart of a
   * delivery that had its turn: it takes its place by acceptance time, not at the end.
   */
  restored?: boolean;
}

export interface OrderedInput {
  configId: string;
  tenantId: string;
  orderingKey: string;
  onFailure: "skip" | "block";
  /** The config batches (docs/webhooks/ordering-and-batching.md#batched-delivery): the head goes as one batch of up to maxEvents. */
  batch?: OrderedBatching;
  /** Carried over by continue-as-new. */
  queue?: OrderedItem[];
  /** Workflow ids of the last deliveries that ended, so a redelivered event is ignored here already. */
  recent?: string[];
  /** The head that failed for good while the config blocks, until an operator releases it. */
  blocked?: Blocked;
}

/** A failed head holding its key: one delivery, or a batch (its first event, and all its events). */
export interface Blocked {
  webhookId: string;
  reason: string;
  /** Every event of a failed batch: a replay of any of them is the operator's retry. */
  batch?: string[];
}

export interface OrderedState {
  queued: number;
  head?: string;
  blocked?: Blocked;
}

/** Adds an event to the key's queue (ignored when that delivery is queued or ended already). */
export const enqueueSignal = defineSignal<[OrderedItem]>("enqueue");
/** An operator releases a blocked key: its failed head stays failed, the next goes. */
export const skipHeadSignal = defineSignal("skip-head");
/** The config was deactivated or deleted: a blocked key lets its queue drain (each closes without a send). */
export const closeOrderedSignal = defineSignal<[reason: string]>("close");
export const orderedStateQuery = defineQuery<OrderedState>("ordered-state");
/** The workflow ids this key's workflow holds: queued, the head, and the last that ended (reconciliation). */
export const orderedKnownQuery = defineQuery<string[]>("ordered-known");

/** An ordered workflow with nothing queued this long ends (a new event starts it again). */
const IDLE_MS = 60_000;
/** How many ended deliveries' ids are kept for dedup; older redeliveries are refused by their child id. */
const RECENT_IDS = 500;
const MAX_HISTORY_EVENTS = 10_000;
/**
 * First sends made in one workflow task at most. A busy key's local activities follow one
 * another within the task that holds its queue; a longer chain let the task run out its
 * timeout on a loaded worker (seen with 1 key at load 14 on 2 cores) and be run again.
 */
const SENDS_PER_TASK = 25;

const { recordOrderingKey } = proxyLocalActivities<OrderingActivities>({
  startToCloseTimeout: "10 seconds",
  retry: { initialInterval: "1 second", backoffCoefficient: 2, maximumInterval: "1 minute" },
});

/** Why a delivery ended without being a failure the key blocks on (it was cancelled, or its config went away). */
const releasesKey = (r: DeliveryResult) =>
  r.status === "success" || r.attempts === 0 || /^(cancelled|config (deactivated|deleted))/.test(r.reason);

export async function orderedDelivery(input: OrderedInput): Promise<void> {
  const queue = [...(input.queue ?? [])];
  const recent = [...(input.recent ?? [])];
  let blocked = input.blocked;
  let head: string | undefined;
  // The workflow ids of the batch being sent (ordered-known answers them while it runs).
  let batchHeads: string[] = [];
  let closing: string | undefined;
  // A head's first send past its budget: its POST, still out in the worker, signals here.
  let firstSendSettled = false;
  // The workflow task of the last first send (its history length) and the sends made in it.
  let task = { at: -1, sends: 0 };
  const ids = new Set([...queue.map((i) => i.workflowId), ...recent]);
  // When each queued event arrived in this run (a batch waits maxWaitMs from its oldest);
  // events carried over by continue-as-new have waited already.
  const arrivedAt = new Map<string, number>();
  let lastBatchEnd = 0;

  setHandler(enqueueSignal, (item) => {
    // A replay of the blocked head is the operator's retry: it goes first and releases the key.
    const replayOf = item.input.replayOf;
    const ofBlocked =
      replayOf !== undefined && (replayOf === blocked?.webhookId || blocked?.batch?.includes(replayOf));
    if (blocked && ofBlocked && !ids.has(item.workflowId)) {
      ids.add(item.workflowId);
      queue.unshift(item);
      blocked = undefined;
      return;
    }
    if (ids.has(item.workflowId) || item.workflowId === head || batchHeads.includes(item.workflowId)) return;
    ids.add(item.workflowId);
    arrivedAt.set(item.workflowId, Date.now());
    const at = item.restored
      ? queue.findIndex((q) => (q.input.acceptedAt ?? "") > (item.input.acceptedAt ?? ""))
      : -1;
    if (at >= 0) queue.splice(at, 0, item);
    else queue.push(item);
  });
  setHandler(firstSendSettledSignal, () => {
    firstSendSettled = true;
  });
  setHandler(orderedKnownQuery, () => [...ids, ...(head ? [head] : []), ...batchHeads]);
  setHandler(skipHeadSignal, () => {
    blocked = undefined;
  });
  setHandler(closeOrderedSignal, (reason) => {
    closing ??= reason;
    blocked = undefined;
  });
  setHandler(orderedStateQuery, () => ({
    queued: queue.length,
    ...(head ? { head } : {}),
    ...(blocked ? { blocked } : {}),
  }));

  const record = (state: "active" | "blocked" | "gone") =>
    recordOrderingKey({
      configId: input.configId,
      orderingKey: input.orderingKey,
      workflowId: workflowInfo().workflowId,
      state,
      ...(state === "blocked" && blocked ? { headWebhookId: blocked.webhookId, reason: blocked.reason } : {}),
    });
  const status = (value: string) => upsertSearchAttributes([{ key: WebhookDeliveryStatus, value }]);
  const historyFull = () => {
    const info = workflowInfo();
    return info.continueAsNewSuggested || info.historyLength > MAX_HISTORY_EVENTS;
  };
  const remember = (workflowId: string) => {
    recent.push(workflowId);
    while (recent.length > RECENT_IDS) ids.delete(recent.shift()!);
  };

  await record(blocked ? "blocked" : "active");
  for (;;) {
    if (blocked) {
      status("blocked");
      setCurrentDetails(
        `blocked by webhook ${blocked.webhookId} (${blocked.reason}); ${queue.length} queued behind it. ` +
          "Release: POST /configs/{id}/ordering-keys/{key}/skip, or replay the webhook",
      );
      await record("blocked");
      await condition(() => blocked === undefined);
      status("active");
      await record("active");
    }
    if (queue.length === 0) {
      setCurrentDetails("idle: nothing queued");
      if (!(await condition(() => queue.length > 0, IDLE_MS))) {
        await record("gone");
        if (queue.length === 0) return;
        await record("active");
      }
    }
    if (historyFull()) {
      return continueAsNew<typeof orderedDelivery>({ ...input, queue, recent, blocked });
    }
    if (input.batch && batchable(queue[0]!) && patched(ORDERED_PATCHES.batches)) {
      const batch = input.batch;
      // As the collector does: up to maxWaitMs from when this batch began to collect, that
      // is its oldest event's arrival or the end of the key's previous batch, the later.
      const since = Math.max(arrivedAt.get(queue[0]!.workflowId) ?? 0, lastBatchEnd);
      const waitMs = since + batch.maxWaitMs - Date.now();
      if (waitMs > 0 && queue.length < batch.maxEvents) {
        setCurrentDetails(`collecting: ${queue.length} of ${batch.maxEvents} events`);
        await condition(() => queue.length >= batch.maxEvents || closing !== undefined, waitMs);
      }
      // Up to maxEvents in acceptance order; a replay or a retry's restart goes alone after them.
      const end = queue.findIndex((q, i) => i >= batch.maxEvents || !batchable(q));
      const members = queue.splice(0, end < 0 ? queue.length : end);
      for (const m of members) arrivedAt.delete(m.workflowId);
      batchHeads = members.map((m) => m.workflowId);
      setCurrentDetails(`delivering a batch of ${members.length} events; ${queue.length} queued behind it`);
      const failed = await runBatch(members, input, () => closing);
      batchHeads = [];
      lastBatchEnd = Date.now();
      for (const m of members) remember(m.workflowId);
      if (failed && input.onFailure === "block" && !closing) blocked = failed;
      continue;
    }
    const item = queue.shift()!;
    arrivedAt.delete(item.workflowId);
    head = item.workflowId;
    // Its turn starts now: caps count from here, not from a wait behind a failing head (a
    // restart resumes with its own).
    const turn = item.input.resume ? item.input : { ...item.input, acceptedAt: new Date().toISOString() };
    let result: DeliveryResult | undefined;
    if (turn.localFirstBudgetMs && !turn.resume && patched(ORDERED_PATCHES.firstSendHere)) {
      if (workflowInfo().historyLength !== task.at) task = { at: workflowInfo().historyLength, sends: 0 };
      // A 1 ms timer ends this task; the next one starts with the signals that came meanwhile.
      if (++task.sends > SENDS_PER_TASK) {
        await sleep(1);
        task = { at: workflowInfo().historyLength, sends: 1 };
      }
      setCurrentDetails(
        `sending webhook ${item.input.webhookId} (first attempt); ${queue.length} queued behind it`,
      );
      firstSendSettled = false;
      const first = await sendFirstLocal(
        turn,
        turn.localFirstBudgetMs,
        Boolean(turn.rateLimited),
        item.workflowId,
      );
      result = endedBy(turn, first);
      if (!result) {
        // Past its budget the POST goes on in the worker: wait for its row (at most a send's
        // own time), so the child's send on the queue finds it instead of waiting out its claim.
        if ("handedOver" in first && first.detached)
          await condition(() => firstSendSettled, sendBudgetOf(turn));
        setCurrentDetails(`delivering webhook ${item.input.webhookId}; ${queue.length} queued behind it`);
        const firstSend = "handedOver" in first ? { ...first, detached: false } : first;
        result = await runChild(item, { ...turn, firstSend }, input);
      }
    } else {
      setCurrentDetails(`delivering webhook ${item.input.webhookId}; ${queue.length} queued behind it`);
      result = await runChild(item, turn, input);
    }
    head = undefined;
    remember(item.workflowId);
    if (result && !releasesKey(result) && input.onFailure === "block" && !closing) {
      blocked = { webhookId: item.input.webhookId, reason: result.reason };
    }
  }
}

/**
 * Runs one delivery to its end. Undefined when its id was used before (a delivery
 * started earlier, e.g. by reconciliation or before the config was ordered): nothing
 * is sent twice, and the key goes on.
 */
async function runChild(
  item: OrderedItem,
  turn: DeliveryInput,
  input: OrderedInput,
): Promise<DeliveryResult | undefined> {
  try {
    return await executeChild(deliverWebhook, {
      workflowId: item.workflowId,
      taskQueue: workflowInfo().taskQueue,
      args: [turn],
      // A restart may reuse the id of its lost or closed workflow (as workers/start-delivery.ts).
      workflowIdReusePolicy: item.input.resume ? "ALLOW_DUPLICATE" : "REJECT_DUPLICATE",
      // A delivery outlives its queue's workflow (terminated or reset): it has its own rows.
      parentClosePolicy: ParentClosePolicy.ABANDON,
      staticSummary: item.summary,
      typedSearchAttributes: deliveryAttributes({
        configId: input.configId,
        webhookId: item.input.webhookId,
        eventType: item.eventType,
        endpointHost: item.endpointHost,
        status: turn.firstSend && "attempt" in turn.firstSend ? "to retry" : "pending",
        attempts: turn.firstSend && "attempt" in turn.firstSend ? 1 : 0,
        tenantId: input.tenantId,
      }),
    });
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return undefined;
    if (!(err instanceof ChildWorkflowFailure)) throw err;
    const ended = (reason: string, attempts: number): DeliveryResult => ({
      webhookId: item.input.webhookId,
      status: "failed",
      attempts,
      lastStatusCode: 0,
      reason,
    });
    // Cancelled or terminated through the API or the Web UI: the operator ended it, the key goes on.
    if (err.cause instanceof CancelledFailure) return ended("cancelled", 0);
    if (err.cause instanceof TerminatedFailure) return ended("cancelled (terminated)", 0);
    // Any other end of the delivery's workflow is its failure: the key's policy decides.
    return ended(`delivery workflow failed: ${err.cause?.message ?? err.message}`, 1);
  }
}

/**
 * The delivery's result when its first send ended it, as the delivery workflow would close
 * it at once (a success, a permanent failure, a config gone); undefined when it goes on.
 */
function endedBy(turn: DeliveryInput, first: LocalFirstOutcome): DeliveryResult | undefined {
  const result = (status: DeliveryResult["status"], attempts: number, code: number, reason: string) => ({
    webhookId: turn.webhookId,
    status,
    attempts,
    lastStatusCode: code,
    reason,
  });
  if ("skipped" in first) return result("failed", 0, 0, first.skipped);
  if (!("attempt" in first)) return undefined;
  const { status, statusCode, error } = first.attempt;
  if (status === "success") return result("success", 1, statusCode, `HTTP ${statusCode}`);
  if (status === "to retry") return undefined;
  return result("failed", 1, statusCode, error ?? `HTTP ${statusCode}`);
}
