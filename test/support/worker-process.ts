import { randomBytes } from "node:crypto";
import { freePort } from "./ports.js";
import { ServiceProcess } from "./process.js";
import type { WebhooksUnderTest } from "./webhooks-server.js";

/** A NATS stream and topic of a test's own, consumed by the workers it starts. */
export function testStream(): { topic: string; stream: string } {
  return {
    topic: `events-${randomBytes(4).toString("hex")}`,
    stream: `TEST_${randomBytes(4).toString("hex").toUpperCase()}`,
  };
}

/**
 * A `webhooks worker` process beside a test's API (its database, Temporal and task queue),
 * consuming `feed` with fast retries; `args` add or override flags. Healthy when it returns.
 */
export async function startWorkerProcess(
  api: WebhooksUnderTest,
  feed: { topic: string; stream: string; consumer: string },
  args: string[] = [],
): Promise<ServiceProcess> {
  const port = await freePort();
  const worker = new ServiceProcess("webhooks", [
    "worker",
    "--listen",
    `127.0.0.1:${port}`,
    "--storage-sqldb-conn-string",
    api.db.url,
    "--temporal-address",
    api.temporalAddress,
    "--task-queue",
    api.taskQueue,
    "--broker-topics",
    feed.topic,
    "--nats-stream",
    feed.stream,
    "--nats-consumer",
    feed.consumer,
    "--min-backoff-delay",
    "200ms",
    "--max-backoff-delay",
    "1s",
    ...args,
  ]);
  await worker.waitHealthy(`http://127.0.0.1:${port}/_healthcheck`);
  return worker;
}
