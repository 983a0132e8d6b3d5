import type { Logger } from "../../common/logger.js";
import type { WebhooksSettings } from "../settings.js";
import { NatsConsumer, NatsPublisher } from "./nats.js";
import type { BrokerConsumer, BrokerPublisher } from "./types.js";

/** The publisher of the configured broker. */
export async function openPublisher(settings: WebhooksSettings, logger: Logger): Promise<BrokerPublisher> {
  if (settings.broker === "kafka") {
    const { KafkaPublisher } = await import("./kafka.js");
    return KafkaPublisher.connect({ brokers: settings.kafkaBrokers, logger });
  }
  return NatsPublisher.connect({
    url: settings.natsUrl,
    auth: settings.natsAuth,
    stream: settings.natsStream,
    limits: settings.natsStreamLimits,
    logger,
  });
}

/** The consumer of the configured broker over `--broker-topics`. */
export async function openConsumer(
  settings: WebhooksSettings,
  logger: Logger,
  concurrency: number,
): Promise<BrokerConsumer> {
  if (settings.broker === "kafka") {
    const { KafkaConsumer } = await import("./kafka.js");
    return new KafkaConsumer({
      brokers: settings.kafkaBrokers,
      groupId: settings.kafkaConsumerGroup,
      topics: settings.brokerTopics,
      redelivery: settings.redelivery,
      logger,
    });
  }
  return new NatsConsumer({
    url: settings.natsUrl,
    auth: settings.natsAuth,
    stream: settings.natsStream,
    limits: settings.natsStreamLimits,
    durable: settings.natsConsumer,
    topics: settings.brokerTopics,
    concurrency,
    redelivery: settings.redelivery,
    logger,
  });
}
