// Data exchanged between the consumer, the delivery workflow and its
// activities. Plain JSON only: it goes through Temporal's payload converter.
import type { EventMessage } from "../core/event-message.js";
import type { EventRef } from "../core/stored-events.js";

/** The retry policy in force when the delivery started (the worker's flags). */
export interface DeliveryPolicy {
  minBackoffMs: number;
  maxBackoffMs: number;
  abortAfterMs: number;
  maxAttempts: number;
  /**
   * --send-timeout of the starting process: the POST's timeout and, through
   * send-budget.ts, its activity's. Absent in deliveries started before it was recorded.
   */
  sendTimeoutMs?: number;
}

export interface DeliveryInput {
  webhookId: string;
  configId: string;
  /**
   * The tenant owning the config (also the WebhookTenantId search attribute). Absent in
   * deliveries started before tenants; no workflow command depends on it.
   */
  tenantId?: string;
  /** The stored event (core/stored-events.ts): the send reads what it POSTs from there. */
  eventRef?: EventRef;
  /**
   * The event itself, in deliveries started before events were stored by reference: the
   * send stores it on its first use and goes on by reference.
   */
  event?: EventMessage;
  policy: DeliveryPolicy;
  /** Task queue of the HTTP send activities (scaled apart from workflow tasks). */
  sendTaskQueue: string;
  /** The webhook this delivery replays, when it is a replay. */
  replayOf?: string;
  /** When the delivery was started (ISO time): a first send that must wait counts its caps from here. */
  acceptedAt?: string;
  /**
   * An ordered delivery's acceptance into its key's backlog (ISO time), where `acceptedAt` is
   * the start of its turn (its caps count from there): the delivery latency counts from here.
   */
  queuedAt?: string;
  /** Ask the rate limit service before each send (the worker had --ratelimit-addr). */
  rateLimited?: boolean;
  /** Send as local activities of the workflow worker (--send-mode local) instead of on sendTaskQueue. */
  localSends?: boolean;
  /**
   * --send-mode local-first: the first send runs as a local activity of the workflow
   * worker, and hands over to sendTaskQueue when it has no answer within this many ms
   * (activities/local-first.ts); retries always go to sendTaskQueue.
   */
  localFirstBudgetMs?: number;
  /**
   * Where a run picks the delivery up instead of at its first send: after a
   * continue-as-new, or when reconciliation restarts a delivery whose workflow
   * was lost. The run waits until the last attempt's next retry, claims it and
   * sends `retryAttempt` (0: the first send, which never happened).
   */
  resume?: DeliveryResume;
  /**
   * An ordered key's workflow made the first send itself (workflows/ordered-delivery.ts) and
   * starts this delivery only because it goes on: the run takes this outcome as its first
   * send's instead of sending attempt 0 again (a retry, the rate limit's wait, or the
   * hand-over to the sends queue). Never `detached`: the key's workflow waited for that POST.
   */
  firstSend?: LocalFirstOutcome;
}

export interface DeliveryResume {
  retryAttempt: number;
  /** The attempts made so far, oldest first (what the `attempts` query answers). */
  attempts: AttemptSummary[];
}

/** What a re-send's claim needs: the delivery's ids and policy, never its event. */
export interface ClaimInput {
  webhookId: string;
  configId: string;
  policy: DeliveryPolicy;
  retryAttempt: number;
}

export type AttemptStatus = "success" | "to retry" | "retrying" | "failed";

/** One row of the attempts table, as the workflow sees it. */
export interface AttemptSummary {
  id: string;
  retryAttempt: number;
  status: AttemptStatus;
  statusCode: number;
  /** ISO time of the next try when status is "to retry". */
  nextRetryAfter: string | null;
  error: string | null;
  createdAt: string;
}

export interface SendAttemptInput extends DeliveryInput {
  retryAttempt: number;
  /**
   * The delivery's own workflow id when another workflow sends for it (an ordered key's makes
   * its head's first send): what its rows name, so cancel, reconciliation and the API find the
   * delivery, not the key. Absent: the workflow running the send.
   */
  deliveryWorkflowId?: string;
}

export type ClaimOutcome = { proceed: true } | { proceed: false; reason: string };

/** What one send activity did: an attempt row, nothing (the delivery ends), or wait for the rate limit. */
export type SendOutcome = { attempt: AttemptSummary } | { skipped: string } | { waitMs: number };

/**
 * What a local first send did: a send outcome within its budget, or handed over to the
 * sends queue. `detached`: its POST is still out in the worker, which signals the workflow
 * (firstSendSettledSignal) once its row is written; the queue's send then finds that row.
 */
export type LocalFirstOutcome = SendOutcome | { handedOver: string; detached: boolean };

export interface LocalFirstInput extends SendAttemptInput {
  budgetMs: number;
}

export interface CloseInput {
  webhookId: string;
  reason: string;
}

export interface DeliveryResult {
  webhookId: string;
  status: "success" | "failed";
  attempts: number;
  lastStatusCode: number;
  reason: string;
}
