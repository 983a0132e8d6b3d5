import { findConfig } from "../core/config-rows.js";
import { claimForRetry, closedReason, failPending, firstAttemptAt } from "./attempts-store.js";
import { closeDeliveries } from "./close-deliveries.js";
import type { DeliveryDeps } from "./delivery-deps.js";
import { whyNoFurtherTry } from "./delivery-policy.js";
import type {
  ClaimInput,
  ClaimOutcome,
  CloseInput,
  LocalFirstInput,
  LocalFirstOutcome,
  SendAttemptInput,
  SendOutcome,
} from "./delivery-types.js";
import { sendFirstLocally } from "./local-first-send.js";
import { sendAttemptOnce } from "./send-attempt.js";
import { permission } from "./send-permission.js";
import { heartbeating } from "./send-pipeline.js";

/** Activities of the delivery workflow; each is one side effect, mirrored into `attempts`. */
export function createDeliveryActivities(deps: DeliveryDeps) {
  const { prisma, pool, logger } = deps;
  return {
    /**
     * Workflows started before the send took permission itself (v1) ask here,
     * then send without asking: 0 means permission was taken.
     */
    async rateLimitWait(configId: string): Promise<number> {
      const config = await findConfig(pool, configId);
      if (!config || !URL.canParse(config.endpoint)) return 0; // the send records why the delivery ends
      return permission(deps, config);
    },

    /**
     * POSTs the event once and inserts its attempt row. A retry of this activity
     * after the row was written returns that row instead of sending again. With
     * rate limiting, permission and POST happen here together; without
     * permission nothing is sent and the claimed row is queued again until then.
     */
    sendAttempt: (input: SendAttemptInput): Promise<SendOutcome> =>
      heartbeating(() => sendAttemptOnce(deps, input)),

    /** The first send as a local activity (--send-mode local-first): local-first-send.ts. */
    sendFirstLocally: (input: LocalFirstInput): Promise<LocalFirstOutcome> => sendFirstLocally(deps, input),

    /**
     * Before a re-send: claims the queued row (`retrying`) and checks that the
     * config is still active and the caps allow another try; otherwise the
     * delivery's rows become `failed` and nothing is sent.
     */
    async claimRetry(input: ClaimInput): Promise<ClaimOutcome> {
      // Nothing left to claim: the row was closed meanwhile (reconciliation, SQL). Its
      // reason stands, even if the config was reactivated since.
      const claimed = await claimForRetry(prisma, input.webhookId, input.retryAttempt);
      if (!claimed) return { proceed: false, reason: await closedReason(prisma, input.webhookId) };
      // The caps apply when the retry was due, not when the timer's task got to run: a
      // retry scheduled at the abort-after deadline itself is sent, never refused late.
      const now = Date.now();
      const reason = whyNoFurtherTry({
        config: await findConfig(pool, input.configId),
        retryAttempt: input.retryAttempt,
        policy: input.policy,
        firstAttemptAt: await firstAttemptAt(prisma, input.webhookId),
        now: claimed.dueAt ? Math.min(now, claimed.dueAt.getTime()) : now,
      });
      if (reason === undefined) return { proceed: true };
      await failPending(prisma, input.webhookId, reason);
      return { proceed: false, reason };
    },

    /** Ends the delivery without a send: its queued or claimed row becomes `failed` with the reason. */
    async closeDelivery({ webhookId, reason }: CloseInput): Promise<number> {
      const closed = await closeDeliveries(deps, [webhookId], reason);
      logger.info({ webhookId, reason, closed }, "delivery closed");
      return closed;
    },
  };
}

export type DeliveryActivities = ReturnType<typeof createDeliveryActivities>;
