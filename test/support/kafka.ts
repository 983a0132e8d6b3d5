// tags: @needs-services (the Kafka broker scripts/kafka.sh starts)
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { FAST_RETRIES, startWebhooks, type WebhooksUnderTest } from "./webhooks-server.js";

/** The broker scripts/kafka.sh runs for the tests. */
export const KAFKA_BROKERS = ["127.0.0.1:9092"];

/** Starts the broker when it does not run yet (scripts/kafka.sh returns at once when it does). */
export async function ensureKafka(): Promise<void> {
  const script = fileURLToPath(new URL("../../../scripts/kafka.sh", import.meta.url));
  await promisify(execFile)("bash", [script], { timeout: 280_000 });
}

/** `webhooks serve --worker` consuming `topic` from Kafka as consumer group `group`, with fast retries. */
export function startKafkaWebhooks(topic: string, group: string): Promise<WebhooksUnderTest> {
  return startWebhooks({
    worker: true,
    args: [
      "--broker",
      "kafka",
      "--kafka-brokers",
      KAFKA_BROKERS.join(","),
      "--broker-topics",
      topic,
      "--kafka-consumer-group",
      group,
      "--audit-topic",
      "",
      ...FAST_RETRIES,
    ],
  });
}
