import type { PrismaClient } from "../common/db/database.js";
import { escapeUnstorable } from "../common/strict-text.js";
import { parseEventMessage, UnparsableMessage } from "../core/event-message.js";
import { deadLetterReplays } from "../core/metrics.js";
import type { ProcessContext } from "../core/process-context.js";
import type { Config, DeadLetter } from "../generated/prisma/client.js";
import {
  type DeliveryStarted,
  type StartFailure,
  startEventDeliveries,
} from "../workers/event-deliveries.js";
import { ApiError, notFound, unavailable } from "./errors.js";

export interface DeadLetterReplay {
  deadLetter: DeadLetter;
  /** The deliveries the replay asked for; `started` is false for one that had started before. */
  deliveries: DeliveryStarted[];
}

export type DeadLetterReplayer = (id: string) => Promise<DeadLetterReplay>;

const conflict = (message: string) => new ApiError(409, "CONFLICT", message);
const describe = (f: StartFailure) => (f.configId ? `config ${f.configId}: ${f.reason}` : f.reason);

/**
 * A replay runs the consumer's start path again on the stored message: to the
 * dead letter's config, or to every active config the event matches when the
 * whole message failed. Workflow ids are those of the original message, so a
 * delivery that had started is not started twice. The dead letter becomes
 * `replayed` when every delivery started; otherwise it stays `pending` with the
 * reason, and the answer says what still fails: 409 when it cannot start as it
 * is (fix the cause first), 503 when it may pass later.
 */
export function createDeadLetterReplayer(ctx: ProcessContext, prisma: PrismaClient): DeadLetterReplayer {
  const failed = async (d: DeadLetter, error: ApiError): Promise<never> => {
    await prisma.deadLetter.update({
      where: { id: d.id },
      data: {
        replayAttempts: { increment: 1 },
        // The reason may quote the message's text, which PostgreSQL may not store as it is.
        lastReplayError: escapeUnstorable(error.message),
        updatedAt: new Date(),
      },
    });
    deadLetterReplays.inc({ result: error.status === 503 ? "unavailable" : "conflict" });
    throw error;
  };

  return async (id) => {
    const d = await prisma.deadLetter.findUnique({ where: { id } });
    if (!d) throw notFound(`dead letter ${id} not found`);
    const data = Buffer.from(d.message);
    let event: ReturnType<typeof parseEventMessage>;
    try {
      event = parseEventMessage(data);
    } catch (err) {
      if (!(err instanceof UnparsableMessage)) throw err;
      return failed(d, conflict(`the message is not an event message: ${err.message}`));
    }
    let configs: Config[] | undefined;
    if (d.configId) {
      const config = await prisma.config.findUnique({ where: { id: d.configId } });
      if (!config) return failed(d, conflict(`config ${d.configId} was deleted`));
      if (!config.active)
        return failed(d, conflict(`config ${d.configId} is inactive; activate it to replay`));
      configs = [config];
    }
    const starts = await startEventDeliveries(ctx, event, data, configs);
    if (starts.configs === 0 && starts.failures.length === 0) {
      return failed(
        d,
        conflict(
          starts.filtered > 0
            ? `the event does not pass the payload filter of the ${starts.filtered} active config(s) subscribed to ${event.type.slice(0, 300)}`
            : `no active config subscribes to ${event.type.slice(0, 300)}`,
        ),
      );
    }
    if (starts.failures.length > 0) {
      const done = `${starts.started.length} of ${starts.started.length + starts.failures.length} deliveries started`;
      const reasons = starts.failures.map(describe).join("; ");
      return failed(
        d,
        starts.failures.some((f) => f.permanent)
          ? conflict(`still cannot start (${done}): ${reasons}`)
          : unavailable(`cannot start now (${done}): ${reasons}; try again`),
      );
    }
    const deadLetter = await prisma.deadLetter.update({
      where: { id },
      data: {
        status: "replayed",
        replayedAt: new Date(),
        replayAttempts: { increment: 1 },
        lastReplayError: null,
        updatedAt: new Date(),
      },
    });
    deadLetterReplays.inc({ result: "started" });
    return { deadLetter, deliveries: starts.started };
  };
}
