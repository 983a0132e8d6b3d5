import {
  AckPolicy,
  type ConsumerConfig,
  type ConsumerInfo,
  DeliverPolicy,
  DiscardPolicy,
  type JetStreamManager,
  nanos,
  RetentionPolicy,
  type StreamConfig,
} from "nats";
import type { Logger } from "../../common/logger.js";
import type { Redelivery } from "./types.js";

// What the NATS consumer and publisher keep in step with the flags on the server: the stream
// holding the topics (created or extended, its limits brought to --nats-stream-*) and the
// settings of each durable consumer (brought to the --broker-* redelivery flags).

/** Bounds of the stream we manage; 0 means none. */
export interface StreamLimits {
  maxAgeMs: number;
  maxBytes: number;
  maxMsgs: number;
}

const MANAGED = "webhooks event topics; subjects and limits kept by the webhooks service (--nats-stream-*)";

/** The limits as JetStream stream settings (it spells "none" -1 for sizes and 0 for age). */
const streamLimits = (l: StreamLimits) => ({
  max_age: nanos(l.maxAgeMs),
  max_bytes: l.maxBytes || -1,
  max_msgs: l.maxMsgs || -1,
  discard: DiscardPolicy.Old,
});

/**
 * The stream holding `subjects`: an existing one that already captures them
 * (operators may provision their own under another name; those are left as
 * they are), else `name`, created or extended. The stream called `name` is
 * ours: its limits are brought to `limits` whenever they differ.
 */
export async function ensureStream(
  jsm: JetStreamManager,
  name: string,
  subjects: string[],
  limits: StreamLimits,
): Promise<string> {
  const missing: string[] = [];
  let found: string | undefined;
  for (const subject of subjects) {
    const stream = await jsm.streams.find(subject).catch(() => undefined);
    if (stream) found ??= stream;
    else missing.push(subject);
  }
  if (missing.length === 0 && found !== name) return found!;
  const existing = await jsm.streams.info(name).catch(() => undefined);
  const wanted = streamLimits(limits);
  try {
    if (!existing) {
      await jsm.streams.add({
        name,
        subjects: missing,
        retention: RetentionPolicy.Limits,
        description: MANAGED,
        ...wanted,
      });
    } else if (missing.length > 0 || !hasLimits(existing.config, wanted)) {
      await jsm.streams.update(name, {
        subjects: [...new Set([...existing.config.subjects, ...missing])],
        description: MANAGED,
        ...wanted,
      });
    }
  } catch (err) {
    throw streamRefused(name, existing ? "update" : "create", err as Error);
  }
  return name;
}

/** JetStream's refusal, with the stream it was about and, for storage, what to change. */
function streamRefused(name: string, verb: string, err: Error): Error {
  // JetStream sets aside each stream's max bytes when it is created, used or not.
  const hint = /insufficient storage/i.test(err.message)
    ? " (the server sets aside each stream's max bytes of its JetStream storage: lower --nats-stream-max-bytes, or delete streams nobody uses)"
    : "";
  return new Error(`cannot ${verb} NATS stream ${name}: ${err.message}${hint}`, { cause: err });
}

const hasLimits = (config: StreamConfig, wanted: ReturnType<typeof streamLimits>): boolean =>
  config.max_age === wanted.max_age &&
  config.max_bytes === wanted.max_bytes &&
  config.max_msgs === wanted.max_msgs &&
  config.discard === wanted.discard;

/** Settings of a durable consumer that follow the flags; an existing consumer is brought to them. */
export function consumerSettings(r: Redelivery, concurrency: number) {
  // No JetStream `backoff`: with one, a message a dead process left unacknowledged waits the
  // step of its delivery count (30 s, 2 m, ...) before it comes back, while newer messages go
  // to the next process at once and overtake it within its ordering key. Without, every
  // such message comes back after ack_wait, the first step, which a starting consumer waits
  // out (NatsConsumer.start). A handling that failed naks with its own step's delay.
  const first = r.maxBrokerDeliveries > 1 ? r.backoffMs[0] : undefined;
  return {
    max_deliver: r.maxBrokerDeliveries,
    ack_wait: nanos(first ?? 60_000),
    backoff: [] as number[],
    max_ack_pending: concurrency * 4,
  };
}

export const sameSettings = (c: ConsumerConfig, wanted: ReturnType<typeof consumerSettings>): boolean =>
  c.max_deliver === wanted.max_deliver &&
  c.ack_wait === wanted.ack_wait &&
  c.max_ack_pending === wanted.max_ack_pending &&
  JSON.stringify(c.backoff ?? []) === JSON.stringify(wanted.backoff);

/**
 * The durable consumer `name` of `topic`: created when missing (from the stream's first
 * message, or from `startSeq`), else brought to `wanted`. Returns what existed before, if
 * anything. Processes starting together may both create it: the loser reads the winner's.
 */
export async function ensureConsumer(
  jsm: JetStreamManager,
  stream: string,
  name: string,
  topic: string,
  wanted: ReturnType<typeof consumerSettings>,
  logger: Logger,
  startSeq?: number,
): Promise<ConsumerInfo | undefined> {
  const existing = await jsm.consumers.info(stream, name).catch(() => undefined);
  if (!existing) {
    const from =
      startSeq === undefined
        ? { deliver_policy: DeliverPolicy.All }
        : { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: startSeq };
    try {
      await jsm.consumers.add(stream, {
        durable_name: name,
        ack_policy: AckPolicy.Explicit,
        filter_subject: topic,
        ...from,
        ...wanted,
      });
    } catch (err) {
      // Created meanwhile by another process (with another start, when it computed one).
      if (!(await jsm.consumers.info(stream, name).catch(() => undefined))) throw err;
    }
  } else if (!sameSettings(existing.config, wanted)) {
    await jsm.consumers.update(stream, name, wanted);
    logger.info({ stream, consumer: name, ...wanted }, "consumer brought to the redelivery flags");
  }
  return existing;
}
