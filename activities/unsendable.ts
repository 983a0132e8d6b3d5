import { Context } from "@temporalio/activity";
import type { Config } from "../generated/prisma/client.js";
import { failPending } from "./attempts-store.js";
import type { DeliveryDeps } from "./delivery-deps.js";
import type { SendAttemptInput } from "./delivery-types.js";
import { closeUnsent, recordUnsentWait, type UnsentWait } from "./unsent-deliveries.js";

/** The workflow id a send's rows name: the delivery's own, also when another workflow sends for it. */
export const deliveryWorkflowId = (input: SendAttemptInput): string | undefined =>
  input.deliveryWorkflowId ?? Context.current().info.workflowExecution?.workflowId;

/** The unsent row of a first send that waits (or ends) before its POST, until `at`. */
export const unsentWait = (
  input: SendAttemptInput,
  config: Config,
  eventId: string | null,
  reason: string,
  at: number,
): UnsentWait => ({
  webhookId: input.webhookId,
  configId: config.id,
  workflowId: deliveryWorkflowId(input) ?? "",
  eventId,
  replayOf: input.replayOf,
  acceptedAt: new Date(input.acceptedAt ?? Date.now()),
  reason,
  nextTryAt: new Date(at),
});

/**
 * Ends a delivery that can never send, with a row that says why: a first send has none
 * yet, so it gets a closed unsent row (naming its stored event, when that still exists).
 */
export async function endUnsendable(
  { prisma, pool }: DeliveryDeps,
  input: SendAttemptInput,
  config: Config,
  reason: string,
  eventId: string | null,
): Promise<void> {
  if (input.retryAttempt > 0) await failPending(prisma, input.webhookId, reason);
  else {
    await recordUnsentWait(pool, unsentWait(input, config, eventId, reason, Date.now()));
    await closeUnsent(pool, input.webhookId, reason);
  }
}
