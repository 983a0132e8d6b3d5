import { explainDatabaseTimeout } from "../common/db/timeouts.js";
import type { BrokerMessage } from "../core/broker/types.js";
import { parseEventMessage } from "../core/event-message.js";
import { deadLettersParked, messagesRedelivered } from "../core/metrics.js";
import type { ProcessContext } from "../core/process-context.js";
import { type DeadLetterEntry, recordDeadLetter } from "./dead-letter-rows.js";
import type { DeadLetterSpool } from "./dead-letter-spool.js";
import type { EventStarts, StartFailure } from "./event-deliveries.js";

// Writing dead letters (the store: dead-letter-rows.ts). A write the store
// refuses never holds up the consumer: it is tried a few times, then the
// message is parked on local disk (dead-letter-spool.ts) and acknowledged, and
// imported into the store once it accepts it.

/** Waits between the tries of one dead-letter write; after the last, the message is parked. */
const WRITE_RETRY_MS = [500, 2000];

/**
 * Puts a dead letter in the store, or parks it when the store refused it
 * every try. Throws only when parking failed too: then the message is not
 * settled, and the broker delivers it again.
 */
export async function storeDeadLetter(
  ctx: ProcessContext,
  spool: DeadLetterSpool,
  e: DeadLetterEntry,
): Promise<"stored" | "parked"> {
  let refusal: Error | undefined;
  for (let tried = 0; ; tried++) {
    try {
      await recordDeadLetter(ctx.db.pool, e);
      return "stored";
    } catch (err) {
      refusal = err as Error;
      const wait = WRITE_RETRY_MS[tried];
      if (wait === undefined) break;
      await new Promise((r) => setTimeout(r, wait));
    }
  }
  const writeError = explainDatabaseTimeout(refusal, ctx.db.timeouts) ?? refusal.message;
  let file: string;
  try {
    file = await spool.park(e, writeError);
  } catch (err) {
    throw new Error(
      `the dead letter could not be written (${refusal.message}) nor parked in ${spool.dir} (${(err as Error).message})`,
    );
  }
  deadLettersParked.inc({ topic: e.msg.topic });
  ctx.logger.error(
    { topic: e.msg.topic, position: e.msg.position, file, err: writeError },
    "the dead-letter store refused a dead letter: parked on disk, imported once the store accepts it",
  );
  return "parked";
}

const describe = (f: StartFailure) => (f.configId ? `config ${f.configId}: ${f.reason}` : f.reason);

/**
 * Settles a consumed message once its starts are done: permanent failures go
 * to the dead-letter store at once; failures that may pass (Temporal or the
 * database unavailable) throw, so the broker delivers the message again after
 * the redelivery backoff (the starts that succeeded start nothing new then),
 * until its last allowed delivery, when they go to the store too. Returns the
 * dead letters written (or parked).
 */
export async function settleStarts(
  ctx: ProcessContext,
  spool: DeadLetterSpool,
  msg: BrokerMessage,
  eventType: string,
  starts: EventStarts,
): Promise<number> {
  const lastDelivery = msg.deliveryCount >= ctx.options.redelivery.maxBrokerDeliveries;
  const retry = starts.failures.filter((f) => f.permanent === null);
  const now = starts.failures.filter((f) => f.permanent !== null || lastDelivery);
  for (const f of now) {
    await storeDeadLetter(ctx, spool, {
      msg,
      eventType,
      configId: f.configId,
      tenantId: starts.tenantId,
      kind: f.permanent ? "permanent" : "exhausted",
      cause: f.permanent ?? "transient",
      reason: f.permanent ? f.reason : `still failing after ${msg.deliveryCount} deliveries: ${f.reason}`,
    });
  }
  if (retry.length > 0 && !lastDelivery) {
    messagesRedelivered.inc({ topic: msg.topic });
    throw new Error(retry.map(describe).join("; "));
  }
  if (now.length > 0) {
    ctx.logger.warn(
      { topic: msg.topic, position: msg.position, type: eventType, failures: now.map(describe) },
      "dead-lettered: deliveries that could not start",
    );
  }
  return now.length;
}

/** Dead-letters a message that is not an event message: it can never be delivered as it is. */
export async function deadLetterUnparsable(
  ctx: ProcessContext,
  spool: DeadLetterSpool,
  msg: BrokerMessage,
  reason: string,
): Promise<void> {
  const where = await storeDeadLetter(ctx, spool, {
    msg,
    kind: "permanent",
    cause: "message",
    reason: `not an event message: ${reason}`,
  });
  ctx.logger.warn(
    { topic: msg.topic, position: msg.position, reason, where },
    "dead-lettered: not an event message",
  );
}

/** Dead-letters a message the broker stopped delivering before it was settled. */
export async function deadLetterAbandoned(
  ctx: ProcessContext,
  spool: DeadLetterSpool,
  msg: BrokerMessage,
  reason: string,
): Promise<void> {
  let eventType: string | undefined;
  try {
    eventType = parseEventMessage(msg.data).type;
  } catch {
    // kept as it came; its replay will say it does not parse
  }
  await storeDeadLetter(ctx, spool, { msg, eventType, kind: "exhausted", cause: "transient", reason });
  ctx.logger.warn({ topic: msg.topic, position: msg.position, reason }, "dead-lettered: the broker gave up");
}
