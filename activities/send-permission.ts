import type { Config } from "../generated/prisma/client.js";
import { firstAttemptAt, requeueClaimed } from "./attempts-store.js";
import type { DeliveryDeps } from "./delivery-deps.js";
import type { SendAttemptInput } from "./delivery-types.js";
import { endUnsendable, unsentWait } from "./unsendable.js";
import { recordUnsentWait } from "./unsent-deliveries.js";

/** 0 when a send of this config to its endpoint may go now (permission taken), else the wait. */
export function permission(
  { rateLimit, logger }: DeliveryDeps,
  config: Pick<Config, "id" | "tenantId" | "endpoint">,
): Promise<number> {
  if (!rateLimit) {
    logger.warn(
      { configId: config.id },
      "delivery asks for rate limiting but this worker has no --ratelimit-addr",
    );
    return Promise.resolve(0);
  }
  return rateLimit.acquire({
    configId: config.id,
    tenantId: config.tenantId,
    endpointHost: new URL(config.endpoint).host,
  });
}

/**
 * The rate limit service said wait, or every send slot of the config was taken (`why`
 * says which: "waiting for the rate limit service"). A wait that would end past the abort-after deadline
 * (counted from the first attempt, or from acceptance when none was sent yet) closes the
 * delivery now with the reason. Otherwise the delivery is queued until then: a retry's
 * claimed row goes back to `to retry`; a first send that has no row yet gets its unsent
 * row (unsent-deliveries.ts), so it is visible, cancellable and repairable while it waits.
 */
export async function waitForPermission(
  deps: DeliveryDeps,
  input: SendAttemptInput,
  config: Config,
  eventId: string,
  waitMs: number,
  why: string,
): Promise<{ skipped: string } | { waitMs: number }> {
  const { prisma, pool } = deps;
  const now = Date.now();
  const accepted = input.acceptedAt ? Date.parse(input.acceptedAt) : now;
  const first = (await firstAttemptAt(prisma, input.webhookId))?.getTime() ?? accepted;
  if (now + waitMs > Math.min(first, accepted) + input.policy.abortAfterMs) {
    const reason = `abort-after window exhausted while ${why}${
      input.retryAttempt === 0 ? " (never sent)" : ""
    }`;
    await endUnsendable(deps, input, config, reason, eventId);
    return { skipped: reason };
  }
  if (input.retryAttempt > 0)
    await requeueClaimed(prisma, input.webhookId, input.retryAttempt, new Date(now + waitMs));
  else await recordUnsentWait(pool, unsentWait(input, config, eventId, why, now + waitMs));
  return { waitMs };
}
