import {
  condition,
  defineQuery,
  defineSignal,
  makeContinueAsNewFunc,
  patched,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
} from "@temporalio/workflow";
import type { DeliveryInput, DeliveryPolicy, DeliveryResult } from "../activities/delivery-types.js";
import type { BacklogItem, KeyRef, OrderedBacklogActivities } from "../activities/ordered-backlog.js";
import type { OrderingActivities } from "../activities/ordering-activities.js";
import { firstSendSettledSignal, sendBudgetOf } from "./delivery.js";
import { sendFirstLocal } from "./first-send.js";
import { type BatchBlock, type OrderedBatching, runBatch } from "./ordered-batches.js";
import { endedBy, type HeadChild, releasesKey, runChild } from "./ordered-head.js";
import { WebhookDeliveryStatus } from "./search-attributes.js";

// The sequencer of one (config, ordering key) (docs/webhooks/ordering-and-batching.md#ordered-delivery).
// The key's backlog is rows in PostgreSQL, numbered in acceptance order
// (activities/ordered-backlog.ts); this workflow holds only what it does now: the head
// in flight and whether the key is blocked. It reads the next rows, runs the head as the
// delivery workflow unchanged (same id, rows, replay, cancel), deletes the head's row once
// it ended, and reads again. Its history grows with the heads it ran, never with the
// backlog: it continues as new on a bound, and no event signals it while it runs (an
// enqueue wakes it only when it went idle).

export interface DeliveryTemplate {
  policy: DeliveryPolicy;
  sendTaskQueue: string;
  rateLimited?: boolean;
  localSends?: boolean;
  localFirstBudgetMs?: number;
}

export interface SequencerInput {
  configId: string;
  tenantId: string;
  orderingKey: string;
  onFailure: "skip" | "block";
  /** The config batches: the head goes as one batch of up to maxEvents. */
  batch?: OrderedBatching;
  endpointHost: string;
  /** What every delivery of the key carries besides its own ids (the worker's flags when the key started). */
  template: DeliveryTemplate;
  /** Carried over by continue-as-new: the head that failed for good, holding the key. */
  blocked?: BatchBlock;
  /** Carried over by continue-as-new: deliveries that ended whose rows are not yet deleted. */
  done?: string[];
}

export interface SequencerState {
  head?: string;
  blocked?: BatchBlock;
}

/** An enqueue found the key idle, or a replay arrived for a blocked key. */
export const wakeSignal = defineSignal("wake");
/** An operator releases a blocked key: its failed head stays failed, the next goes. Names the head it releases. */
export const releaseHeadSignal = defineSignal<[webhookId?: string]>("skip-head");
/** The config was deactivated, deleted or stopped ordering: a blocked key drains. */
export const releaseKeySignal = defineSignal<[reason: string]>("close");
export const sequencerStateQuery = defineQuery<SequencerState>("ordered-state");

/** An idle sequencer ends after this long (the next enqueue starts it again). */
const IDLE_MS = 60_000;
/** Histories recorded before SHORT_RUNS_PATCH replay with this bound. */
const MAX_HISTORY_EVENTS = 10_000;
/** Histories recorded between SHORT_RUNS_PATCH and RUNS_OF_50_PATCH replay with this bound. */
const SHORT_RUN_EVENTS = 150;
/**
 * A worker that takes a key over (its previous worker died or was replaced) replays the
 * run's history before its first new step, for every key it takes at once, and the SDK
 * spends about 4 ms per local-activity marker doing so (test/histories replayed alone, a
 * quiet machine): with 40 keys of runs of 130-150 events, the new worker's tasks outlasted
 * even a 30 s task timeout on a loaded CI machine. A run therefore carries at most this
 * many events, counting the markers of the task under way (two per first send: the backlog
 * read and the send), which workflowInfo().historyLength does not include yet. Its state
 * (the block, the rows to delete) is a few bytes: continuing as new costs one task.
 */
const MAX_RUN_EVENTS = 50;
/**
 * v2 of the sequencer: short runs (SHORT_RUN_EVENTS). A run started before it takes the
 * bound on its first task on a worker with the patch (patched() is true outside replay).
 */
export const SHORT_RUNS_PATCH = "sequencer-short-runs";
/** v3: runs of MAX_RUN_EVENTS, this task's markers counted; taken up as SHORT_RUNS_PATCH was. */
export const RUNS_OF_50_PATCH = "sequencer-runs-of-50";
/**
 * The workflow-task timeout of every run (the start's and each continue-as-new's). Its tasks
 * run the key's sends, and a worker that takes keys over replays each run first: beside a
 * CPU hog, 40 keys replaying at once took 14-16 s per task. Past the default 10 s the
 * server times the task out, the worker drops what it did and replays again, and
 * deliveries fell from 35/s to 5/s for minutes. The price: a key whose worker dies during
 * a task waits this long (instead of 10 s) before another worker takes it over.
 */
export const SEQUENCER_TASK_TIMEOUT = "30 seconds";
/** First sends made in one workflow task at most (a longer chain ran out the task's timeout on a loaded worker). */
const SENDS_PER_TASK = 25;
/**
 * And for this long at most (from the task's start to the last send's row): slow receivers
 * that still answer within the budget would otherwise hold a workflow-task slot for up to
 * 25 budgets, while other keys' tasks wait for one.
 */
const CHAIN_MS = 2_000;
/** How often a head the sequencer did not start is looked at, at most. */
const MAX_POLL_MS = 30_000;

const backlog = proxyLocalActivities<OrderedBacklogActivities & OrderingActivities>({
  startToCloseTimeout: "10 seconds",
  retry: { initialInterval: "1 second", backoffCoefficient: 2, maximumInterval: "1 minute" },
});

/** Whether the run should continue as new; `k` counts the markers of the task under way. */
const historyFull = (k: Sequencer) => {
  const info = workflowInfo();
  if (info.continueAsNewSuggested) return true;
  if (patched(RUNS_OF_50_PATCH)) return info.historyLength + k.markersThisTask() > MAX_RUN_EVENTS;
  return info.historyLength > (patched(SHORT_RUNS_PATCH) ? SHORT_RUN_EVENTS : MAX_HISTORY_EVENTS);
};

const status = (value: string) => upsertSearchAttributes([{ key: WebhookDeliveryStatus, value }]);

class Sequencer {
  readonly key: KeyRef;
  blocked: BatchBlock | undefined;
  /** Deliveries whose turn ended: their rows go at the next read. */
  done: string[];
  head: string | undefined;
  woken = false;
  /** Forwarded to a batch waiting for its retry; cleared once the head it came during ended. */
  closing: string | undefined;
  firstSendSettled = false;
  /**
   * The workflow task of the last first send (its history length), when it began, the sends
   * made in it, and when the last one's row was written (all replayed from the history).
   */
  task = { at: -1, since: 0, sends: 0, lastAt: 0 };
  lastBatchEnd = 0;

  /** Markers of this task's first sends (a backlog read and a send each) not yet in historyLength. */
  markersThisTask(): number {
    return this.task.at === workflowInfo().historyLength ? 2 * this.task.sends : 0;
  }

  constructor(readonly input: SequencerInput) {
    this.key = {
      sequencerId: workflowInfo().workflowId,
      configId: input.configId,
      orderingKey: input.orderingKey,
    };
    this.blocked = input.blocked;
    this.done = [...(input.done ?? [])];
  }

  listen(): void {
    setHandler(wakeSignal, () => {
      this.woken = true;
    });
    setHandler(firstSendSettledSignal, () => {
      this.firstSendSettled = true;
    });
    setHandler(releaseHeadSignal, (webhookId) => {
      const b = this.blocked;
      // A late release names a head that is no longer the one holding the key: ignored.
      if (b && (!webhookId || webhookId === b.webhookId || b.batch.includes(webhookId))) this.release();
    });
    setHandler(releaseKeySignal, (reason) => {
      // Only a head in flight hears of it (a batch waiting for its retry closes instead).
      if (this.head) this.closing = reason;
      this.release();
    });
    setHandler(sequencerStateQuery, () => ({
      ...(this.head ? { head: this.head } : {}),
      ...(this.blocked ? { blocked: this.blocked } : {}),
    }));
  }

  release(): void {
    if (!this.blocked) return;
    this.done.push(...this.blocked.batch);
    this.blocked = undefined;
  }

  async record(state: "active" | "blocked"): Promise<void> {
    await status(state);
    await backlog.recordOrderingKey({
      configId: this.input.configId,
      orderingKey: this.input.orderingKey,
      workflowId: this.key.sequencerId,
      state,
      ...(state === "blocked" && this.blocked
        ? { headWebhookId: this.blocked.webhookId, reason: this.blocked.reason }
        : {}),
    });
  }

  read(limit: number, activate = false) {
    const done = this.done;
    this.done = [];
    return backlog.readBacklog({
      ...this.key,
      done,
      limit,
      activate,
      ...(this.blocked ? { replaysOf: this.blocked.batch } : {}),
    });
  }

  /** The delivery input of a backlog item, its turn starting now. */
  turnOf(item: BacklogItem, acceptedAt = new Date().toISOString()): DeliveryInput {
    const { template, configId, tenantId } = this.input;
    return {
      webhookId: item.webhookId,
      configId,
      tenantId,
      eventRef: item.eventRef,
      ...template,
      ...(item.replayOf ? { replayOf: item.replayOf } : {}),
      acceptedAt,
      queuedAt: item.acceptedAt,
    };
  }

  childOf(item: BacklogItem): HeadChild {
    return {
      workflowId: item.workflowId,
      eventType: item.eventType,
      endpointHost: this.input.endpointHost,
      summary: `${item.eventType} → ${this.input.endpointHost}`.slice(0, 200),
      restart: false,
    };
  }

  /**
   * Ends the head's turn: its rows go, or, when it failed for good and the key blocks, the
   * row of its first event stays as the block's mark (the block itself is in the key's row,
   * which a run that begins after a loss reads) until the key is released.
   */
  async ended(ids: string[], failed: BatchBlock | undefined): Promise<void> {
    const closing = this.closing;
    this.closing = undefined;
    if (failed && this.input.onFailure === "block" && !closing) {
      this.blocked = failed;
      this.done.push(...ids.filter((id) => id !== failed.webhookId));
      await this.record("blocked");
    } else this.done.push(...ids);
  }
}

export async function keySequencer(input: SequencerInput): Promise<void> {
  const k = new Sequencer(input);
  k.listen();
  let activate = true;
  for (;;) {
    if (historyFull(k)) {
      return makeContinueAsNewFunc<typeof keySequencer>({ workflowTaskTimeout: SEQUENCER_TASK_TIMEOUT })({
        ...input,
        blocked: k.blocked,
        done: k.done,
      });
    }
    // Before the read: a wake that comes while it runs (a replay for a blocked key) is kept.
    k.woken = false;
    const read = await k.read(input.batch?.maxEvents ?? 1, activate);
    activate = false;
    // A key found blocked in its row (Temporal lost the run that blocked it): it stays blocked.
    if (read.blocked && !k.blocked) {
      k.blocked = { ...read.blocked, batch: [read.blocked.webhookId] };
      await k.record("blocked");
    }
    const first = read.items[0];
    if (k.blocked) {
      if (first?.replayOf && k.blocked.batch.includes(first.replayOf)) {
        // The operator's retry: the replay goes first and releases the key.
        k.release();
        await k.record("active");
        await deliverHead(k, first);
      } else await holdWhileBlocked(k);
      continue;
    }
    if (!first) {
      if (!(await backlog.parkKey({ ...k.key, lastSeq: read.lastSeq }))) continue;
      setCurrentDetails("idle: nothing waiting");
      if (!(await condition(() => k.woken, IDLE_MS))) return;
      activate = true;
      continue;
    }
    if (input.batch && batchable(first)) await sendHeadBatch(k, input.batch, read.items);
    else await deliverHead(k, first);
  }
}

/** Whether an item may go in a batch: never sent, and not a replay (those go alone). */
const batchable = (item: BacklogItem) => !item.sent && !item.replayOf;

/** A blocked key waits for an operator (release, a replay of its head, or its config closing). */
async function holdWhileBlocked(k: Sequencer): Promise<void> {
  const b = k.blocked!;
  setCurrentDetails(
    `blocked by webhook ${b.webhookId} (${b.reason}). ` +
      "Release: POST /configs/{id}/ordering-keys/{key}/skip, or replay the webhook",
  );
  await condition(() => k.blocked === undefined || k.woken);
  if (!k.blocked) await k.record("active");
}

/** The head, to its end: its first send here when it may, a child for what follows. */
async function deliverHead(k: Sequencer, item: BacklogItem): Promise<void> {
  k.head = item.webhookId;
  const result = item.sent ? await rowsEnd(k, item) : await sendHead(k, item);
  k.head = undefined;
  // The history is full while the head goes on: the next run takes it up from its row.
  if (result === "continue") return;
  const failed = result && !releasesKey(result);
  await k.ended(
    [item.webhookId],
    failed ? { webhookId: item.webhookId, reason: result.reason, batch: [item.webhookId] } : undefined,
  );
}

/** A head this sequencer starts: its first send locally when the worker sends local-first. */
async function sendHead(k: Sequencer, item: BacklogItem): Promise<DeliveryResult | "continue" | undefined> {
  const turn = k.turnOf(item);
  const child = k.childOf(item);
  setCurrentDetails(`delivering webhook ${item.webhookId}`);
  if (!turn.localFirstBudgetMs) return (await runChild(child, turn, k.input)) ?? rowsEnd(k, item);
  const newTask = () => ({ at: workflowInfo().historyLength, since: Date.now(), sends: 0, lastAt: 0 });
  if (workflowInfo().historyLength !== k.task.at) k.task = newTask();
  // A 1 ms timer ends this task; the next one starts with the signals that came meanwhile.
  if (++k.task.sends > SENDS_PER_TASK || k.task.lastAt - k.task.since > CHAIN_MS) {
    await sleep(1);
    k.task = { ...newTask(), sends: 1 };
  }
  k.firstSendSettled = false;
  const first = await sendFirstLocal(
    turn,
    turn.localFirstBudgetMs,
    Boolean(turn.rateLimited),
    item.workflowId,
  );
  if ("attempt" in first) k.task.lastAt = Date.parse(first.attempt.createdAt);
  const ended = endedBy(turn, first);
  if (ended) return ended;
  // Past its budget the POST goes on in the worker: wait for its row (at most a send's own
  // time), so the child's send on the queue finds it instead of waiting out its claim.
  if ("handedOver" in first && first.detached) await condition(() => k.firstSendSettled, sendBudgetOf(turn));
  const firstSend = "handedOver" in first ? { ...first, detached: false } : first;
  return (await runChild(child, { ...turn, firstSend }, k.input)) ?? rowsEnd(k, item);
}

/**
 * A head whose delivery runs without this sequencer as its parent (started by an earlier
 * run, or restarted by reconciliation from its rows): its end is read from its rows.
 */
async function rowsEnd(k: Sequencer, item: BacklogItem): Promise<DeliveryResult | "continue"> {
  setCurrentDetails(`waiting for webhook ${item.webhookId}, started before this run`);
  for (let waitMs = 1000; ; waitMs = Math.min(waitMs * 2, MAX_POLL_MS)) {
    const end = await backlog.deliveryEnded({ webhookId: item.webhookId, workflowId: item.workflowId });
    if (end && "lost" in end) {
      // Gone before its first send (its workflow failed or vanished): started again, in turn.
      const child = { ...k.childOf(item), workflowId: end.workflowId, restart: true };
      const again = await runChild(child, k.turnOf(item), k.input);
      if (again) return again;
      continue;
    }
    if (end) {
      const failed = end.failed !== undefined;
      return {
        webhookId: item.webhookId,
        status: failed ? "failed" : "success",
        attempts: failed ? 1 : 0,
        lastStatusCode: 0,
        reason: end.failed ?? "ended",
      };
    }
    if (historyFull(k)) return "continue";
    await condition(() => k.closing !== undefined, waitMs);
  }
}

/** A batched key: up to maxEvents never-sent heads as one batch, awaited before the next. */
async function sendHeadBatch(k: Sequencer, batch: OrderedBatching, items: BacklogItem[]): Promise<void> {
  // As the collector does: up to maxWaitMs from when this batch began to collect, that is
  // its oldest event's acceptance or the end of the key's previous batch, the later.
  const since = Math.max(Date.parse(items[0]!.acceptedAt), k.lastBatchEnd);
  const waitMs = since + batch.maxWaitMs - Date.now();
  if (waitMs > 0 && items.length < batch.maxEvents) {
    setCurrentDetails(`collecting: ${items.length} of ${batch.maxEvents} events`);
    await condition(() => k.closing !== undefined, waitMs);
    items = (await k.read(batch.maxEvents)).items;
    if (!items[0] || !batchable(items[0])) return;
  }
  const end = items.findIndex((item) => !batchable(item));
  const members = items.slice(0, end < 0 ? items.length : end);
  setCurrentDetails(`delivering a batch of ${members.length} events`);
  k.head = members[0]!.webhookId;
  const failed = await runBatch(
    members.map((m) => ({ input: k.turnOf(m, m.acceptedAt) })),
    k.input,
    () => k.closing,
  );
  k.head = undefined;
  k.lastBatchEnd = Date.now();
  await k.ended(
    members.map((m) => m.webhookId),
    failed,
  );
}
