import type { DeliveryPolicy } from "../activities/delivery-types.js";
import type { ProcessContext } from "../core/process-context.js";
import type { DeliveryTemplate } from "../workflows/key-sequencer.js";
import { sendQueue } from "./task-queues.js";

// What every delivery this process starts carries from its flags: the retry policy and
// how it sends (workers/start-delivery.ts, and an ordered key's sequencer, which starts
// its deliveries itself: workers/enqueue-ordered.ts).

/** The policy every new delivery carries, from the worker's flags. */
export function deliveryPolicy(ctx: ProcessContext): DeliveryPolicy {
  const s = ctx.options;
  return {
    minBackoffMs: s.minBackoffDelay,
    maxBackoffMs: s.maxBackoffDelay,
    abortAfterMs: s.abortAfter,
    maxAttempts: s.maxAttempts,
    sendTimeoutMs: s.sendTimeout,
  };
}

/** The part of a delivery's input that comes from the flags, not from its event. */
export function deliveryTemplate(ctx: ProcessContext): DeliveryTemplate {
  const o = ctx.options;
  return {
    policy: deliveryPolicy(ctx),
    sendTaskQueue: sendQueue(o.taskQueue),
    ...(o.ratelimitAddr ? { rateLimited: true } : {}),
    ...(o.sendMode === "local" ? { localSends: true } : {}),
    ...(o.sendMode === "local-first" ? { localFirstBudgetMs: o.localSendBudget } : {}),
  };
}
