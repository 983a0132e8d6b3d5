import { WorkflowExecutionAlreadyStartedError } from "@temporalio/common";
import {
  CancelledFailure,
  ChildWorkflowFailure,
  executeChild,
  ParentClosePolicy,
  TerminatedFailure,
  workflowInfo,
} from "@temporalio/workflow";
import type { DeliveryInput, DeliveryResult, LocalFirstOutcome } from "../activities/delivery-types.js";
import { deliverWebhook } from "./delivery.js";
import { deliveryAttributes } from "./search-attributes.js";

// The head of an ordered key (workflows/key-sequencer.ts, and the key workflows of the
// earlier shape, workflows/ordered-delivery.ts): the delivery workflow, unchanged, run as
// a child under the delivery's own id, and what its end means for the key.

/** The head's child workflow: its id, and what the Web UI shows of it. */
export interface HeadChild {
  workflowId: string;
  eventType: string;
  endpointHost: string;
  summary: string;
  /** A restart from the delivery's rows: it may reuse the id of its lost workflow. */
  restart: boolean;
}

/** Why a delivery ended without being a failure the key blocks on (it was cancelled, or its config went away). */
export const releasesKey = (r: DeliveryResult) =>
  r.status === "success" || r.attempts === 0 || /^(cancelled|config (deactivated|deleted))/.test(r.reason);

/**
 * Runs one delivery to its end. Undefined when its id was used before (a delivery
 * started earlier, e.g. by reconciliation or before the config was ordered): nothing
 * is sent twice, and the key goes on.
 */
export async function runChild(
  item: HeadChild,
  turn: DeliveryInput,
  input: { configId: string; tenantId: string },
): Promise<DeliveryResult | undefined> {
  try {
    return await executeChild(deliverWebhook, {
      workflowId: item.workflowId,
      taskQueue: workflowInfo().taskQueue,
      args: [turn],
      // A restart may reuse the id of its lost or closed workflow (as workers/start-delivery.ts).
      workflowIdReusePolicy: item.restart ? "ALLOW_DUPLICATE" : "REJECT_DUPLICATE",
      // A delivery outlives its queue's workflow (terminated or reset): it has its own rows.
      parentClosePolicy: ParentClosePolicy.ABANDON,
      staticSummary: item.summary,
      typedSearchAttributes: deliveryAttributes({
        configId: input.configId,
        webhookId: turn.webhookId,
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
      webhookId: turn.webhookId,
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
export function endedBy(turn: DeliveryInput, first: LocalFirstOutcome): DeliveryResult | undefined {
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
