import {
  CancellationScope,
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  isCancellation,
  patched,
  proxyActivities,
  proxyLocalActivities,
  proxySinks,
  setCurrentDetails,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
} from "@temporalio/workflow";
import type { DeliveryActivities } from "../activities/delivery-activities.js";
import type {
  AttemptSummary,
  DeliveryInput,
  DeliveryResult,
  LocalFirstOutcome,
  SendOutcome,
} from "../activities/delivery-types.js";
import { LEGACY_SEND_BUDGET_MS, sendBudgetMs } from "../activities/send-budget.js";
import type { DeliverySinks } from "./delivery-sinks.js";
import { sendFirstLocal } from "./first-send.js";
import { WebhookAttemptCount, WebhookDeliveryStatus } from "./search-attributes.js";

/** The attempts of this delivery so far, oldest first (for the Web UI and `temporal workflow query`). */
export const attemptsQuery = defineQuery<AttemptSummary[]>("attempts");

/**
 * Ends the delivery without another send (the config was deactivated or
 * deleted): the workflow closes its queued row with the reason and finishes
 * `failed`. A send in flight completes first.
 */
export const closeDeliverySignal = defineSignal<[reason: string]>("close");

/**
 * --send-mode local-first: the first send's POST, detached from its local activity past
 * the budget, has written its row (activities/local-first.ts); the queue's send finds it.
 */
export const firstSendSettledSignal = defineSignal("first-send-settled");

/**
 * Patch ids (docs/webhooks/changing-the-workflow.md). Workflows
 * started before a patch replay their old branch; remove a branch with
 * deprecatePatch once no delivery started before it can still be running.
 */
export const PATCHES = {
  /** v2: the send activity asks the rate limit service itself (v1 asked in a separate activity). */
  rateLimitInSend: "rate-limit-in-send",
  /** v3: a delivery that retries long hands over to a new run too, not only one waiting for the rate limit. */
  continueAsNewWhileRetrying: "continue-as-new-while-retrying",
} as const;

/** Past this many events a run hands over to a new one, whatever the server suggests. */
const MAX_HISTORY_EVENTS = 10_000;
/**
 * Past this size too. A delivery carries its event by reference (core/stored-events.ts)
 * and stays far below; one started before that carries the event (up to 256 KiB) into
 * each send, and hands over after a few sends of a large event, under 2 MiB per run.
 */
const MAX_HISTORY_BYTES = 1024 * 1024;

const { deliveries } = proxySinks<DeliverySinks>();

// Activity retries are for infrastructure failures only (database down, worker
// lost); the endpoint's answer is always an attempt row, never an exception.
const retry = { initialInterval: "1 second", backoffCoefficient: 2, maximumInterval: "1 minute" } as const;
/** How long a send may take: its POST's timeout plus a bounded overhead (activities/send-budget.ts). */
export const sendBudgetOf = (input: DeliveryInput) =>
  input.policy.sendTimeoutMs ? sendBudgetMs(input.policy.sendTimeoutMs) : LEGACY_SEND_BUDGET_MS;

const activities = (input: DeliveryInput) => {
  // Temporal must not give up on a send sooner than it may take. (Timeouts are not part
  // of replay's checks.)
  const startToCloseTimeout = sendBudgetOf(input);
  return input.localSends
    ? // In the workflow worker: no activity task, one workflow task fewer per send.
      proxyLocalActivities<DeliveryActivities>({ startToCloseTimeout, retry })
    : proxyActivities<DeliveryActivities>({
        taskQueue: input.sendTaskQueue,
        startToCloseTimeout,
        // The send heartbeats through every step (activities/delivery-activities.ts).
        heartbeatTimeout: "20 seconds",
        retry,
      });
};

/** The delivery's result, also written to its search attributes and current details. */
function finished(
  input: DeliveryInput,
  attempts: AttemptSummary[],
  status: DeliveryResult["status"],
  reason: string,
): DeliveryResult {
  const last = attempts.at(-1);
  upsertSearchAttributes([
    { key: WebhookDeliveryStatus, value: status },
    { key: WebhookAttemptCount, value: attempts.length },
  ]);
  setCurrentDetails(`${status}: ${reason}`);
  return {
    webhookId: input.webhookId,
    status,
    attempts: attempts.length,
    lastStatusCode: last?.statusCode ?? 0,
    reason,
  };
}

/** True when this run's history should hand over to a new run. */
function historyFull(): boolean {
  const info = workflowInfo();
  return (
    info.continueAsNewSuggested ||
    info.historyLength > MAX_HISTORY_EVENTS ||
    info.historySize > MAX_HISTORY_BYTES
  );
}

/** The next run picks up at `retryAttempt`, with the attempts so far. */
function handOverRun(input: DeliveryInput, attempts: AttemptSummary[], retryAttempt: number): Promise<never> {
  // What a key's workflow did of the first send is in `attempts` now: the next run must not reuse it.
  const { firstSend: _made, ...rest } = input;
  return continueAsNew<typeof deliverWebhook>({ ...rest, resume: { retryAttempt, attempts } });
}

/** Re-sends' activities need the delivery's ids and policy, not its event. */
const claimInputOf = (input: DeliveryInput, retryAttempt: number) => ({
  webhookId: input.webhookId,
  configId: input.configId,
  policy: input.policy,
  retryAttempt,
});

/** A retry is due: the search attributes and current details say so, and when. */
function showRetry(attempts: AttemptSummary[], retryAttempt: number, attempt: AttemptSummary): void {
  upsertSearchAttributes([
    { key: WebhookDeliveryStatus, value: "to retry" },
    { key: WebhookAttemptCount, value: attempts.length },
  ]);
  setCurrentDetails(
    `attempt ${retryAttempt + 1} got ${attempt.statusCode || attempt.error}; next try at ${attempt.nextRetryAfter}`,
  );
}

/** v1: permission in its own activity, then a timer per OVER_LIMIT answer. */
async function legacyRateLimitGate(
  rateLimitWait: (configId: string) => Promise<number>,
  configId: string,
): Promise<void> {
  for (;;) {
    const waitMs = await rateLimitWait(configId);
    if (waitMs <= 0) return;
    setCurrentDetails(`waiting ${waitMs} ms for the rate limit service`);
    await sleep(waitMs);
  }
}

// A send is never cut off by cancellation: its attempt row is written before
// the workflow reacts, so cleanup always sees the final state of the table.
// The sinks tell this process's start pacing a send is in flight (workers/deliveries-in-flight.ts);
// each `await send` is followed by `sendFinished` (a send that throws ends the workflow,
// and its place expires there). Neither this nor the body of deliverWebhook is an async
// function of its own: the SDK records a source-mapped stack trace for every promise a
// workflow creates (for its stack-trace query), a large part of what a delivery's workflow
// tasks cost beyond the floor's.
// In local-first mode only the first send here counts: a send on the queue is for a
// receiver that was slow, failed or must be retried, and counting it would let hanging
// receivers hold back the starts of every other config (bench/delivery/isolation.ts).
function sendOnce(
  input: DeliveryInput,
  sendAttempt: ReturnType<typeof activities>["sendAttempt"],
  retryAttempt: number,
  rateLimited: boolean,
): Promise<SendOutcome> {
  if (!input.localFirstBudgetMs) deliveries.sendStarted();
  return CancellationScope.nonCancellable(() => sendAttempt({ ...input, rateLimited, retryAttempt }));
}

// --send-mode local-first: the first send in this worker, within its budget; otherwise
// (no answer in time, a worker that takes none, a failure) on the sends queue. A POST
// still out past the budget is waited for (its signal, at most a send's own time): the
// queue's send then finds its row, or takes over its claim if it never came. The fast
// path adds no promise of its own (see above): the hand-over is the slow path.
function firstSendOf(
  input: DeliveryInput,
  rateLimited: boolean,
): LocalFirstOutcome | Promise<LocalFirstOutcome> {
  // Made already by an ordered key's workflow (workflows/ordered-delivery.ts): go on from it.
  if (input.firstSend) return input.firstSend;
  deliveries.sendStarted();
  return sendFirstLocal(input, input.localFirstBudgetMs!, rateLimited);
}

/**
 * Delivers one event to one config: first send, then durable backoff timers
 * and re-sends until success, a permanent failure, the caps, or the config
 * going away. The workflow is the one authority on the delivery; every
 * transition is mirrored into the attempts table by its activities, so a
 * waiting delivery has exactly one queued row and a closed one none.
 */
export async function deliverWebhook(input: DeliveryInput): Promise<DeliveryResult> {
  const { sendAttempt, claimRetry, rateLimitWait, closeDelivery } = activities(input);
  const attempts: AttemptSummary[] = [...(input.resume?.attempts ?? [])];
  setHandler(attemptsQuery, () => attempts);
  // Acted on before any hand-over (both continue-as-new sites check it first, in the same
  // activation as the signal), so a next run never has a close to inherit.
  let closing: string | undefined;
  setHandler(closeDeliverySignal, (reason) => {
    closing ??= reason;
  });
  let firstSendSettled = false;
  setHandler(firstSendSettledSignal, () => {
    firstSendSettled = true;
  });
  /** A durable timer that a close signal cuts short (the same timer command as a plain sleep). */
  const wait = (ms: number) => condition(() => closing !== undefined, Math.max(1, ms));
  const finish = (status: DeliveryResult["status"], reason: string) =>
    finished(input, attempts, status, reason);
  const close = async (reason: string) => {
    await closeDelivery({ webhookId: input.webhookId, reason });
    return finish("failed", reason);
  };
  const send = (retryAttempt: number, rateLimited: boolean) =>
    sendOnce(input, sendAttempt, retryAttempt, rateLimited);
  const localFirstBudgetMs = input.localFirstBudgetMs;
  const handOverFirst = async (o: { handedOver: string; detached: boolean }, rateLimited: boolean) => {
    setCurrentDetails(`first send handed to the sends queue: ${o.handedOver}`);
    if (o.detached) await condition(() => firstSendSettled, sendBudgetOf(input));
    return send(0, rateLimited);
  };

  try {
    const start = input.resume?.retryAttempt ?? 0;
    if (start > 0) {
      const due = attempts.at(-1)?.nextRetryAfter;
      await wait(due ? Date.parse(due) - Date.now() : 0);
    }
    for (let retryAttempt = start; ; retryAttempt++) {
      if (closing) return await close(closing);
      if (retryAttempt > 0) {
        const claim = await claimRetry(claimInputOf(input, retryAttempt));
        if (!claim.proceed) return finish("failed", claim.reason);
      }
      let inSend = Boolean(input.rateLimited);
      if (input.rateLimited && !patched(PATCHES.rateLimitInSend)) {
        await legacyRateLimitGate(rateLimitWait, input.configId);
        inSend = false;
      }
      // Only a local first send fails over to the queue; any other send's failure ends the run.
      let outcome: LocalFirstOutcome = await (retryAttempt === 0 && (localFirstBudgetMs || input.firstSend)
        ? firstSendOf(input, inSend)
        : send(retryAttempt, inSend));
      if ("handedOver" in outcome) {
        deliveries.sendFinished();
        outcome = await handOverFirst(outcome, inSend);
      }
      deliveries.sendFinished();
      while ("waitMs" in outcome) {
        // Waiting for the rate limit is never an attempt; a long wait hands over to a
        // new run before the history grows past what Temporal keeps comfortably. A close
        // that came during the send is honoured first (the next run would not know of it).
        if (closing) return await close(closing);
        if (historyFull()) return await handOverRun(input, attempts, retryAttempt);
        setCurrentDetails(`waiting ${outcome.waitMs} ms for the rate limit service`);
        await wait(outcome.waitMs);
        if (closing) return await close(closing);
        if (retryAttempt > 0) {
          const claim = await claimRetry(claimInputOf(input, retryAttempt));
          if (!claim.proceed) return finish("failed", claim.reason);
        }
        outcome = await send(retryAttempt, true);
        deliveries.sendFinished();
      }
      if ("skipped" in outcome) return finish("failed", outcome.skipped);
      const attempt = outcome.attempt;
      attempts.push(attempt);
      if (attempt.status === "success") return finish("success", `HTTP ${attempt.statusCode}`);
      if (attempt.status !== "to retry") {
        return finish("failed", attempt.error ?? `HTTP ${attempt.statusCode}`);
      }
      showRetry(attempts, retryAttempt, attempt);
      // A long run of retries hands over too; the next run waits for this retry's time.
      if (!closing && historyFull() && patched(PATCHES.continueAsNewWhileRetrying))
        return await handOverRun(input, attempts, retryAttempt + 1);
      await wait(Date.parse(attempt.nextRetryAfter!) - Date.now());
    }
  } catch (err) {
    if (!isCancellation(err)) throw err;
    // Cancelled (API or Temporal Web UI): the queued row is closed before the workflow ends.
    await CancellationScope.nonCancellable(() => close("cancelled"));
    throw err;
  }
}
