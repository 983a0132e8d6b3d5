// Opens the broker the options name (NATS JetStream or Kafka); the broker/ folder holds
// each client, this file only picks one from the flags.
import type { Logger } from "../common/logger.js";
import { NatsConsumer, NatsPublisher } from "./broker/nats.js";
import type { BrokerConsumer, BrokerPublisher } from "./broker/types.js";
import { natsPartitionMetrics } from "./metrics.js";
import type { WebhooksOptions } from "./options.js";

/** The publisher of the configured broker. */
export async function openPublisher(options: WebhooksOptions, logger: Logger): Promise<BrokerPublisher> {
  if (options.broker === "kafka") {
    const { KafkaPublisher } = await import("./broker/kafka.js");
    return KafkaPublisher.connect({ brokers: options.kafkaBrokers, logger });
  }
  return NatsPublisher.connect({
    url: options.natsUrl,
    auth: options.natsAuth,
    stream: options.natsStream,
    limits: options.natsStreamLimits,
    logger,
  });
}

/** The consumer of the configured broker over `--broker-topics`. */
export async function openConsumer(
  options: WebhooksOptions,
  logger: Logger,
  concurrency: number,
): Promise<BrokerConsumer> {
  if (options.broker === "kafka") {
    const { KafkaConsumer } = await import("./broker/kafka.js");
    return new KafkaConsumer({
      brokers: options.kafkaBrokers,
      groupId: options.kafkaConsumerGroup,
      topics: options.brokerTopics,
      redelivery: options.redelivery,
      logger,
    });
  }
  const nats = {
    url: options.natsUrl,
    auth: options.natsAuth,
    stream: options.natsStream,
    limits: options.natsStreamLimits,
    durable: options.natsConsumer,
    topics: options.brokerTopics,
    concurrency,
    redelivery: options.redelivery,
    logger,
  };
  if (options.natsPartitions > 1 && options.storageSqldbConnString) {
    const { PartitionedNatsConsumer } = await import("./broker/nats-partitions.js");
    return new PartitionedNatsConsumer({
      ...nats,
      partitions: options.natsPartitions,
      connString: options.storageSqldbConnString,
      metrics: natsPartitionMetrics,
    });
  }
  return new NatsConsumer(nats);
}
