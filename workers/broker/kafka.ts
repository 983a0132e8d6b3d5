import { type Consumer, Kafka, logLevel, type Producer } from "kafkajs";
import type { Logger } from "../../common/logger.js";
import type { BrokerConsumer, BrokerPublisher, MessageHandler } from "./types.js";

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

/**
 * A consumer-group member over the topics. An offset is committed only after
 * the handler returned; a handler error makes kafkajs seek back and deliver the
 * message again.
 */
export class KafkaConsumer implements BrokerConsumer {
  private consumer?: Consumer;

  constructor(
    private readonly opts: { brokers: string[]; groupId: string; topics: string[]; logger: Logger },
  ) {}

  async start(handler: MessageHandler): Promise<void> {
    const { brokers, groupId, topics, logger } = this.opts;
    this.consumer = client(brokers, logger, `webhooks-${groupId}`).consumer({ groupId });
    try {
      await this.consumer.connect();
    } catch (err) {
      throw new Error(`cannot reach Kafka at ${brokers.join(",")}: ${(err as Error).message}`);
    }
    await subscribe(this.consumer, topics);
    const deliveries = new Map<string, number>();
    await this.consumer.run({
      eachMessage: async ({ topic, partition, message }) => {
        const key = `${topic}/${partition}/${message.offset}`;
        const count = (deliveries.get(key) ?? 0) + 1;
        deliveries.set(key, count);
        await handler({ topic, data: message.value ?? new Uint8Array(), deliveryCount: count });
        deliveries.delete(key);
      },
    });
    logger.info({ brokers, groupId, topics }, "consuming from Kafka");
  }

  async stop(): Promise<void> {
    await this.consumer?.disconnect();
  }

  async healthy(): Promise<void> {
    if (!this.consumer) throw new Error("Kafka consumer not started");
    await this.consumer.describeGroup();
  }
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
