import {
  CancelledFailure,
  ChildWorkflowFailure,
  condition,
  ParentClosePolicy,
  startChild,
  TerminatedFailure,
  uuid4,
  workflowInfo,
} from "@temporalio/workflow";
import type { BatchOutcome } from "../activities/batch-activities.js";
import type { DeliveryInput } from "../activities/delivery-types.js";
import { batchWorkflowId } from "../core/batching.js";
import { closeBatchesSignal, deliverBatch } from "./batch-delivery.js";

// An ordered config that batches (docs/webhooks/ordering-and-batching.md): its key's
// workflow sends the head of its queue as one batch through the batched configs' own batch
// workflow (same POST, signing, batch id, attempt rows, retried as a unit), as a child it
// awaits, so a key's batches go one after the other in acceptance order, never overlapping.

/** A queued event of the key (OrderedItem of workflows/ordered-delivery.ts). */
interface Queued {
  input: DeliveryInput;
}

/** A failed batch holding its key: its first event, why, and all its events. */
export interface BatchBlock {
  webhookId: string;
  reason: string;
  batch: string[];
}

/** The config's batching, as the key's workflow was started with it. */
export interface OrderedBatching {
  maxEvents: number;
  maxWaitMs: number;
}

/**
 * Whether a queued event may go in a batch: new deliveries and restarts of never-sent ones
 * do; a replay and the restart of a batch's retry go alone, as for an unordered config (and
 * an event carried inline by an older release, which a batch cannot read by reference).
 */
export const batchable = (item: Queued): boolean =>
  item.input.eventRef !== undefined && !item.input.replayOf && (item.input.resume?.retryAttempt ?? 0) === 0;

/** A batch that ended this way lets its key go on under either policy (as a single delivery's cancel or config close). */
const releasesKey = (reason: string) => /^(cancelled|config (deactivated|deleted)|every event)/.test(reason);

/**
 * Sends `members` (in queue order) as one batch and waits for its end. Returns the block
 * it leaves when it failed for good (the key's policy decides whether it holds), undefined
 * when it succeeded or was closed. `closing` forwards a config's deactivation or deletion to
 * a batch that is waiting for its retry.
 */
export async function runBatch(
  members: Queued[],
  input: { configId: string; orderingKey: string },
  closing: () => string | undefined,
): Promise<BatchBlock | undefined> {
  const first = members[0]!.input;
  const batchId = uuid4();
  const webhookIds = members.map((m) => m.input.webhookId);
  const failed = (reason: string): BatchBlock => ({ webhookId: webhookIds[0]!, reason, batch: webhookIds });
  let ended: { outcome: BatchOutcome } | { err: unknown } | undefined;
  try {
    const handle = await startChild(deliverBatch, {
      workflowId: batchWorkflowId(input.configId, batchId),
      taskQueue: workflowInfo().taskQueue,
      args: [
        {
          batchId,
          configId: input.configId,
          members: members.map((m) => ({
            webhookId: m.input.webhookId,
            eventRef: m.input.eventRef!,
            acceptedAt: m.input.acceptedAt ?? new Date().toISOString(),
          })),
          policy: first.policy,
          sendTaskQueue: first.sendTaskQueue,
          ...(first.rateLimited ? { rateLimited: true as const } : {}),
        },
      ],
      // A batch outlives its key's workflow (terminated or reset): it has its own rows.
      parentClosePolicy: ParentClosePolicy.ABANDON,
      staticSummary: `ordered batch of ${members.length} events, key ${input.orderingKey.slice(0, 100)}`,
    });
    handle.result().then(
      (outcome) => {
        ended = { outcome };
      },
      (err: unknown) => {
        ended = { err };
      },
    );
    await condition(() => ended !== undefined || closing() !== undefined);
    if (!ended) {
      // Its events close at its next wake-up instead of being retried.
      // (It may have ended meanwhile: then there is nothing to tell.)
      await handle.signal(closeBatchesSignal, closing()!).catch(() => undefined);
      await condition(() => ended !== undefined);
    }
  } catch (err) {
    ended = { err };
  }
  const end = ended!;
  if ("err" in end) {
    const err = end.err;
    if (!(err instanceof ChildWorkflowFailure)) throw err;
    if (err.cause instanceof CancelledFailure || err.cause instanceof TerminatedFailure) return undefined;
    return failed(`batch workflow failed: ${err.cause?.message ?? err.message}`);
  }
  const { outcome } = end;
  if ("skipped" in outcome) return releasesKey(outcome.skipped) ? undefined : failed(outcome.skipped);
  if ("status" in outcome && outcome.status === "failed")
    return failed(outcome.error ?? `HTTP ${outcome.statusCode}`);
  return undefined;
}
