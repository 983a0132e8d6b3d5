import { type Admin, type Consumer, Kafka, logLevel, type Producer } from "kafkajs";
import type { Logger } from "../../common/logger.js";
import { StallMonitor } from "./stall-monitor.js";
import {
  type BrokerConsumer,
  type BrokerPublisher,
  type MessageHandler,
  type Redelivery,
  redeliveryDelay,
} from "./types.js";

function client(brokers: string[], logger: Logger, clientId: string): Kafka {
  return new Kafka({
    clientId,
    brokers,
    logLevel: logLevel.WARN,
    logCreator: () => (entry) => logger.warn({ kafka: entry.namespace, ...entry.log }, entry.log.message),
  });
}

/**
 * A KRaft broker answers the metadata request that auto-creates a topic with
 * UNKNOWN_TOPIC_OR_PARTITION, which kafkajs does not retry on subscribe; the
 * topic exists moments later, so subscribing is tried again for a few seconds.
 */
async function subscribe(consumer: Consumer, topics: string[]): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await consumer.subscribe({ topics, fromBeginning: true });
      return;
    } catch (err) {
      if ((err as { type?: string }).type !== "UNKNOWN_TOPIC_OR_PARTITION" || attempt >= 20) throw err;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

/** Without flags (tests of the consumer alone): a failed message is handed over again at once, forever. */
const RETRY_AT_ONCE: Redelivery = {
  maxBrokerDeliveries: Number.POSITIVE_INFINITY,
  backoffMs: [],
  stuckAfterMs: 0,
};

/**
 * A consumer-group member over the topics. Messages of a partition are
 * handled in order, so a message whose handler threw is handed over again
 * right here after the redelivery backoff (heartbeating meanwhile), counting
 * its deliveries, until the handler settles it; its offset is committed only
 * then. Stopping abandons the retry without a commit (it is delivered again).
 */
export class KafkaConsumer implements BrokerConsumer {
  private consumer?: Consumer;
  private admin?: Admin;
  private monitor?: StallMonitor;
  private stopping = false;
  /** Deliveries so far of messages not yet settled, by position (survives kafkajs fetching them again). */
  private readonly deliveries = new Map<string, number>();

  constructor(
    private readonly opts: {
      brokers: string[];
      groupId: string;
      topics: string[];
      logger: Logger;
      redelivery?: Redelivery;
    },
  ) {}

  async start(handler: MessageHandler): Promise<void> {
    const { brokers, groupId, topics, logger } = this.opts;
    const redelivery = this.opts.redelivery ?? RETRY_AT_ONCE;
    const kafka = client(brokers, logger, `webhooks-${groupId}`);
    this.consumer = kafka.consumer({ groupId });
    try {
      await this.consumer.connect();
    } catch (err) {
      throw new Error(`cannot reach Kafka at ${brokers.join(",")}: ${(err as Error).message}`);
    }
    await subscribe(this.consumer, topics);
    if (redelivery.stuckAfterMs > 0) {
      this.admin = kafka.admin();
      await this.admin.connect();
      this.monitor = new StallMonitor(
        `Kafka consumer group ${groupId}`,
        redelivery.stuckAfterMs,
        () => lag(this.admin!, groupId, topics),
        logger,
      );
      this.monitor.start();
    }
    await this.consumer.run({
      eachMessage: async ({ topic, partition, message, heartbeat }) => {
        const position = `kafka:${topic}:${partition}:${message.offset}`;
        const data = message.value ?? new Uint8Array();
        for (;;) {
          const deliveryCount = (this.deliveries.get(position) ?? 0) + 1;
          this.deliveries.set(position, deliveryCount);
          try {
            await handler({ topic, data, deliveryCount, position });
            this.deliveries.delete(position);
            this.monitor?.progress();
            return;
          } catch (err) {
            if (this.stopping) throw err;
            const delayMs = redeliveryDelay(redelivery, deliveryCount);
            logger.warn(
              { topic, position, deliveries: deliveryCount, delayMs, err: (err as Error).message },
              "message handling failed: redelivering",
            );
            await this.pause(delayMs, heartbeat);
          }
        }
      },
    });
    logger.info({ brokers, groupId, topics }, "consuming from Kafka");
  }

  /** Waits `ms` while staying in the group (a rebalance throws, and kafkajs delivers the message again). */
  private async pause(ms: number, heartbeat: () => Promise<void>): Promise<void> {
    const until = Date.now() + ms;
    while (Date.now() < until) {
      if (this.stopping) throw new Error("consumer stopping");
      await new Promise((r) => setTimeout(r, Math.min(1000, until - Date.now())));
      await heartbeat();
    }
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.monitor?.stop();
    await this.consumer?.disconnect();
    await this.admin?.disconnect();
  }

  async healthy(): Promise<void> {
    if (!this.consumer) throw new Error("Kafka consumer not started");
    await this.consumer.describeGroup();
    this.monitor?.check();
  }
}

/** Messages of the topics the group has not committed yet. */
async function lag(admin: Admin, groupId: string, topics: string[]): Promise<number> {
  let total = 0;
  const committed = await admin.fetchOffsets({ groupId, topics });
  for (const topic of topics) {
    const done = new Map(
      committed.find((c) => c.topic === topic)?.partitions.map((p) => [p.partition, Number(p.offset)]) ?? [],
    );
    for (const p of await admin.fetchTopicOffsets(topic)) {
      const from = Math.max(done.get(p.partition) ?? -1, Number(p.low));
      total += Math.max(0, Number(p.high) - from);
    }
  }
  return total;
}

export class KafkaPublisher implements BrokerPublisher {
  private constructor(private readonly producer: Producer) {}

  static async connect(opts: { brokers: string[]; logger: Logger }): Promise<KafkaPublisher> {
    const producer = client(opts.brokers, opts.logger, "webhooks-publisher").producer();
    try {
      await producer.connect();
    } catch (err) {
      throw new Error(`cannot reach Kafka at ${opts.brokers.join(",")}: ${(err as Error).message}`);
    }
    return new KafkaPublisher(producer);
  }

  async publish(topic: string, message: unknown): Promise<void> {
    await this.producer.send({ topic, messages: [{ value: JSON.stringify(message) }] });
  }

  close(): Promise<void> {
    return this.producer.disconnect();
  }
}
