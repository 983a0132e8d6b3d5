import {
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  patched,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
} from "@temporalio/workflow";
import type { DeliveryInput, DeliveryResult } from "../activities/delivery-types.js";
import type { OrderingActivities } from "../activities/ordering-activities.js";
import { firstSendSettledSignal, sendBudgetOf } from "./delivery.js";
import { sendFirstLocal } from "./first-send.js";
import { batchable, type OrderedBatching, runBatch } from "./ordered-batches.js";
import { endedBy, type HeadChild, releasesKey, runChild } from "./ordered-head.js";
import { WebhookDeliveryStatus } from "./search-attributes.js";

// The key workflow of the earlier shape, kept so that its runs still open when the key
// sequencer (workflows/key-sequencer.ts) replaced it run to their end; nothing starts it
// any more, and it goes once none runs (docs/webhooks/changing-the-workflow.md).
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

/** The head's child workflow, as workflows/ordered-head.ts starts it. */
const childOf = (item: OrderedItem): HeadChild => ({
  workflowId: item.workflowId,
  eventType: item.eventType,
  endpointHost: item.endpointHost,
  summary: item.summary,
  restart: item.input.resume !== undefined,
});

/** What the key's workflow holds between its steps: its signal handlers and its loop share it. */
class KeyQueue {
  readonly queue: OrderedItem[];
  readonly recent: string[];
  readonly ids: Set<string>;
  blocked: Blocked | undefined;
  head: string | undefined;
  /** The workflow ids of the batch being sent (ordered-known answers them while it runs). */
  batchHeads: string[] = [];
  closing: string | undefined;
  /** A head's first send past its budget: its POST, still out in the worker, signals here. */
  firstSendSettled = false;
  /** The workflow task of the last first send (its history length) and the sends made in it. */
  task = { at: -1, sends: 0 };
  /**
   * When each queued event arrived in this run (a batch waits maxWaitMs from its oldest);
   * events carried over by continue-as-new have waited already.
   */
  readonly arrivedAt = new Map<string, number>();
  lastBatchEnd = 0;

  constructor(input: OrderedInput) {
    this.queue = [...(input.queue ?? [])];
    this.recent = [...(input.recent ?? [])];
    this.blocked = input.blocked;
    this.ids = new Set([...this.queue.map((i) => i.workflowId), ...this.recent]);
  }

  /** The signals and queries of the key's workflow. */
  listen(): void {
    setHandler(enqueueSignal, (item) => this.enqueue(item));
    setHandler(firstSendSettledSignal, () => {
      this.firstSendSettled = true;
    });
    setHandler(orderedKnownQuery, () => [...this.ids, ...(this.head ? [this.head] : []), ...this.batchHeads]);
    setHandler(skipHeadSignal, () => {
      this.blocked = undefined;
    });
    setHandler(closeOrderedSignal, (reason) => {
      this.closing ??= reason;
      this.blocked = undefined;
    });
    setHandler(orderedStateQuery, () => ({
      queued: this.queue.length,
      ...(this.head ? { head: this.head } : {}),
      ...(this.blocked ? { blocked: this.blocked } : {}),
    }));
  }

  private enqueue(item: OrderedItem): void {
    // A replay of the blocked head is the operator's retry: it goes first and releases the key.
    const replayOf = item.input.replayOf;
    const ofBlocked =
      replayOf !== undefined &&
      (replayOf === this.blocked?.webhookId || this.blocked?.batch?.includes(replayOf));
    if (this.blocked && ofBlocked && !this.ids.has(item.workflowId)) {
      this.ids.add(item.workflowId);
      this.queue.unshift(item);
      this.blocked = undefined;
      return;
    }
    if (
      this.ids.has(item.workflowId) ||
      item.workflowId === this.head ||
      this.batchHeads.includes(item.workflowId)
    )
      return;
    this.ids.add(item.workflowId);
    this.arrivedAt.set(item.workflowId, Date.now());
    const at = item.restored
      ? this.queue.findIndex((q) => (q.input.acceptedAt ?? "") > (item.input.acceptedAt ?? ""))
      : -1;
    if (at >= 0) this.queue.splice(at, 0, item);
    else this.queue.push(item);
  }

  /** An ended delivery: a redelivery of it is ignored while it is among the last RECENT_IDS. */
  remember(workflowId: string): void {
    this.recent.push(workflowId);
    while (this.recent.length > RECENT_IDS) this.ids.delete(this.recent.shift()!);
  }
}

type RecordState = (state: "active" | "blocked" | "gone") => Promise<void>;

const status = (value: string) => upsertSearchAttributes([{ key: WebhookDeliveryStatus, value }]);

const historyFull = () => {
  const info = workflowInfo();
  return info.continueAsNewSuggested || info.historyLength > MAX_HISTORY_EVENTS;
};

export async function orderedDelivery(input: OrderedInput): Promise<void> {
  const k = new KeyQueue(input);
  k.listen();
  const record: RecordState = (state) =>
    recordOrderingKey({
      configId: input.configId,
      orderingKey: input.orderingKey,
      workflowId: workflowInfo().workflowId,
      state,
      ...(state === "blocked" && k.blocked
        ? { headWebhookId: k.blocked.webhookId, reason: k.blocked.reason }
        : {}),
    });

  await record(k.blocked ? "blocked" : "active");
  for (;;) {
    if (k.blocked) await holdWhileBlocked(k, record);
    if (k.queue.length === 0) {
      setCurrentDetails("idle: nothing queued");
      if (!(await condition(() => k.queue.length > 0, IDLE_MS))) {
        await record("gone");
        if (k.queue.length === 0) return;
        await record("active");
      }
    }
    if (historyFull()) {
      return continueAsNew<typeof orderedDelivery>({
        ...input,
        queue: k.queue,
        recent: k.recent,
        blocked: k.blocked,
      });
    }
    if (input.batch && batchable(k.queue[0]!) && patched(ORDERED_PATCHES.batches))
      await sendHeadBatch(k, input, input.batch);
    else await deliverHead(k, input);
  }
}

/** A blocked key waits for an operator (skip, a replay of its head, or its config closing). */
async function holdWhileBlocked(k: KeyQueue, record: RecordState): Promise<void> {
  status("blocked");
  setCurrentDetails(
    `blocked by webhook ${k.blocked!.webhookId} (${k.blocked!.reason}); ${k.queue.length} queued behind it. ` +
      "Release: POST /configs/{id}/ordering-keys/{key}/skip, or replay the webhook",
  );
  await record("blocked");
  await condition(() => k.blocked === undefined);
  status("active");
  await record("active");
}

/** A batched key: its queue's head (up to maxEvents) goes as one batch, awaited before the next. */
async function sendHeadBatch(k: KeyQueue, input: OrderedInput, batch: OrderedBatching): Promise<void> {
  const { queue } = k;
  // As the collector does: up to maxWaitMs from when this batch began to collect, that
  // is its oldest event's arrival or the end of the key's previous batch, the later.
  const since = Math.max(k.arrivedAt.get(queue[0]!.workflowId) ?? 0, k.lastBatchEnd);
  const waitMs = since + batch.maxWaitMs - Date.now();
  if (waitMs > 0 && queue.length < batch.maxEvents) {
    setCurrentDetails(`collecting: ${queue.length} of ${batch.maxEvents} events`);
    await condition(() => queue.length >= batch.maxEvents || k.closing !== undefined, waitMs);
  }
  // Up to maxEvents in acceptance order; a replay or a retry's restart goes alone after them.
  const end = queue.findIndex((q, i) => i >= batch.maxEvents || !batchable(q));
  const members = queue.splice(0, end < 0 ? queue.length : end);
  for (const m of members) k.arrivedAt.delete(m.workflowId);
  k.batchHeads = members.map((m) => m.workflowId);
  setCurrentDetails(`delivering a batch of ${members.length} events; ${queue.length} queued behind it`);
  const failed = await runBatch(members, input, () => k.closing);
  k.batchHeads = [];
  k.lastBatchEnd = Date.now();
  for (const m of members) k.remember(m.workflowId);
  if (failed && input.onFailure === "block" && !k.closing) k.blocked = failed;
}

/** The queue's head, to its end: its first send here when it may, a child for what follows. */
async function deliverHead(k: KeyQueue, input: OrderedInput): Promise<void> {
  const item = k.queue.shift()!;
  k.arrivedAt.delete(item.workflowId);
  k.head = item.workflowId;
  // Its turn starts now: caps count from here, not from a wait behind a failing head (a
  // restart resumes with its own).
  const turn = item.input.resume ? item.input : { ...item.input, acceptedAt: new Date().toISOString() };
  let result: DeliveryResult | undefined;
  if (turn.localFirstBudgetMs && !turn.resume && patched(ORDERED_PATCHES.firstSendHere)) {
    if (workflowInfo().historyLength !== k.task.at) k.task = { at: workflowInfo().historyLength, sends: 0 };
    // A 1 ms timer ends this task; the next one starts with the signals that came meanwhile.
    if (++k.task.sends > SENDS_PER_TASK) {
      await sleep(1);
      k.task = { at: workflowInfo().historyLength, sends: 1 };
    }
    setCurrentDetails(
      `sending webhook ${item.input.webhookId} (first attempt); ${k.queue.length} queued behind it`,
    );
    k.firstSendSettled = false;
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
        await condition(() => k.firstSendSettled, sendBudgetOf(turn));
      setCurrentDetails(`delivering webhook ${item.input.webhookId}; ${k.queue.length} queued behind it`);
      const firstSend = "handedOver" in first ? { ...first, detached: false } : first;
      result = await runChild(childOf(item), { ...turn, firstSend }, input);
    }
  } else {
    setCurrentDetails(`delivering webhook ${item.input.webhookId}; ${k.queue.length} queued behind it`);
    result = await runChild(childOf(item), turn, input);
  }
  k.head = undefined;
  k.remember(item.workflowId);
  if (result && !releasesKey(result) && input.onFailure === "block" && !k.closing) {
    k.blocked = { webhookId: item.input.webhookId, reason: result.reason };
  }
}
