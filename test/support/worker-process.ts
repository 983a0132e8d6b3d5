import { randomBytes } from "node:crypto";
import { connect, type NatsConnection } from "nats";
import { freePort } from "./ports.js";
import { ServiceProcess } from "./process.js";
import { Receiver } from "./receiver.js";
import { startWebhooks, type WebhooksUnderTest } from "./webhooks-server.js";

/** A NATS stream and topic of a test's own, consumed by the workers it starts. */
export function testStream(): { topic: string; stream: string } {
  return {
    topic: `events-${randomBytes(4).toString("hex")}`,
    stream: `TEST_${randomBytes(4).toString("hex").toUpperCase()}`,
  };
}

/** A NATS stream a worker consumes through a durable consumer, or a Kafka topic through a consumer group. */
export type Feed =
  | { topic: string; stream: string; consumer: string }
  | { topic: string; kafkaGroup: string };

const feedArgs = (feed: Feed): string[] =>
  "kafkaGroup" in feed
    ? ["--broker", "kafka", "--kafka-brokers", "127.0.0.1:9092", "--kafka-consumer-group", feed.kafkaGroup]
    : ["--nats-stream", feed.stream, "--nats-consumer", feed.consumer];

/**
 * A `webhooks worker` process beside a test's API (its database, Temporal and task queue),
 * consuming `feed` with fast retries; `args` add or override flags. Healthy when it returns.
 */
export async function startWorkerProcess(
  api: WebhooksUnderTest,
  feed: Feed,
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
    ...feedArgs(feed),
    "--min-backoff-delay",
    "200ms",
    "--max-backoff-delay",
    "1s",
    ...args,
  ]);
  await worker.waitHealthy(`http://127.0.0.1:${port}/_healthcheck`);
  return worker;
}

/**
 * The stack of a kill test: an API process, a receiver, and one worker consuming a NATS
 * stream of the test's own, which the test kills and restarts (`restartWorker`).
 */
export class KilledWorkerStack {
  api!: WebhooksUnderTest;
  receiver!: Receiver;
  worker: ServiceProcess | undefined;
  private nats: NatsConnection | undefined;
  /** The output of the workers killed so far. */
  private readonly killedOutput: string[] = [];
  private readonly feed: { topic: string; stream: string; consumer: string };

  /** `name` tells the consumer apart; `workerArgs` are added to every worker's flags. */
  constructor(
    name: string,
    private readonly workerArgs: string[] = [],
  ) {
    const { topic, stream } = testStream();
    this.feed = { topic, stream, consumer: `${name}-${stream.toLowerCase()}` };
  }

  async start(): Promise<this> {
    this.api = await startWebhooks({ args: ["--audit-topic", ""] });
    this.receiver = await new Receiver().start();
    this.nats = await connect({ servers: "nats://127.0.0.1:4222" });
    this.worker = await startWorkerProcess(this.api, this.feed, this.workerArgs);
    return this;
  }

  /** Publishes every message at once (all in flight together, in stream order). */
  async publishAll(messages: unknown[]): Promise<void> {
    const js = this.nats!.jetstream();
    await Promise.all(messages.map((m) => js.publish(this.feed.topic, JSON.stringify(m))));
  }

  /** Kills the worker with SIGKILL and starts another in its place. */
  async restartWorker(): Promise<void> {
    await this.worker?.stop("SIGKILL");
    if (this.worker) this.killedOutput.push(this.worker.output);
    this.worker = await startWorkerProcess(this.api, this.feed, this.workerArgs);
  }

  /** Log lines of every worker so far (killed ones first) matching `pattern`, with a line for each restart. */
  workerLines(pattern: RegExp): string[] {
    return [...this.killedOutput, this.worker?.output ?? ""].flatMap((o, i) => [
      ...(i > 0 ? [`--- worker ${i + 1} started`] : []),
      ...o.split("\n").filter((l) => pattern.test(l)),
    ]);
  }

  async stop(): Promise<void> {
    await this.worker?.stop();
    await this.receiver?.stop();
    await this.api?.stop();
    await (await this.nats?.jetstreamManager())?.streams.delete(this.feed.stream).catch(() => {});
    await this.nats?.close();
  }
}
