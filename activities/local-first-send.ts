import { Context } from "@temporalio/activity";
import { firstSends } from "../core/metrics.js";
import type { DeliveryDeps } from "./delivery-deps.js";
import type { LocalFirstInput, LocalFirstOutcome } from "./delivery-types.js";
import { sendAttemptOnce } from "./send-attempt.js";

/**
 * The first send as a local activity (--send-mode local-first): the send of
 * send-attempt.ts, given `budgetMs` to answer. Past it, the POST goes on detached, the
 * workflow is told to hand over to the sends queue (whose send finds this one's row, or
 * its claim), and the config cools down; a send that failed cools it down too. A POST
 * answered in time whose row cannot be written yet (the database is down) goes on detached
 * the same way, its writes tried again and its claim renewed meanwhile (write-after-post.ts).
 * A config cooling down, or a worker with too many detached POSTs, hands over at once
 * without sending.
 */
export async function sendFirstLocally(
  deps: DeliveryDeps,
  input: LocalFirstInput,
): Promise<LocalFirstOutcome> {
  const { localFirst: sends, logger, firstSendSettled } = deps;
  const skip = sends ? sends.skipReason(input.configId) : "this worker takes no local first sends";
  if (!sends || skip) {
    firstSends.inc({ outcome: "skipped" });
    return { handedOver: skip ?? "", detached: false };
  }
  const workflowId = Context.current().info.workflowExecution?.workflowId ?? "";
  // The budget is the receiver's: it runs from the moment the POST leaves.
  let timer: NodeJS.Timeout | undefined;
  let posting = () => {};
  const overBudget = new Promise<undefined>((r) => {
    posting = () => {
      timer = setTimeout(() => r(undefined), input.budgetMs);
    };
  });
  const sending = sendAttemptOnce(deps, input, () => posting());
  const outcome = await Promise.race([sending, overBudget]).finally(() => clearTimeout(timer));
  if (outcome) {
    firstSends.inc({ outcome: "local" });
    if ("attempt" in outcome && outcome.attempt.status !== "success")
      sends.coolDown(
        input.configId,
        `a first send got ${outcome.attempt.statusCode || outcome.attempt.error}`,
      );
    return outcome;
  }
  firstSends.inc({ outcome: "over_budget" });
  const why = `no answer within ${input.budgetMs} ms`;
  sends.coolDown(input.configId, `a first send had ${why}`);
  sends.detach(
    sending
      .catch((err: unknown) =>
        logger.warn({ webhookId: input.webhookId, err: String(err) }, "detached first send failed"),
      )
      .finally(() =>
        firstSendSettled?.(workflowId).catch((err: unknown) =>
          logger.debug({ workflowId, err: String(err) }, "could not tell the workflow its first send ended"),
        ),
      ),
  );
  return { handedOver: why, detached: true };
}
