import { randomBytes } from "node:crypto";
import { connect, type NatsConnection } from "nats";
import { freePort } from "./ports.js";
import { type Executable, ServiceProcess } from "./process.js";
import { Receiver } from "./receiver.js";
import { FAST_RETRIES, startWebhooks, type WebhooksUnderTest } from "./webhooks-server.js";

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
 * consuming `feed` with fast retries; `args` add or override flags; `executable`: another
 * tree's `webhooks` (this tree's by default). Healthy when it returns.
 */
export async function startWorkerProcess(
  api: WebhooksUnderTest,
  feed: Feed,
  args: string[] = [],
  executable: Executable | "webhooks" = "webhooks",
): Promise<ServiceProcess> {
  const port = await freePort();
  const worker = new ServiceProcess(executable, [
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
    ...FAST_RETRIES,
    ...args,
  ]);
  await worker.waitHealthy(`http://127.0.0.1:${port}/_healthcheck`);
  return worker;
}

/**
 * The stack of a kill test: an API process, a receiver, and `count` workers consuming a NATS
 * stream of the test's own, which the test kills and restarts (`restartWorker`).
 */
export class KilledWorkerStack {
  api!: WebhooksUnderTest;
  receiver!: Receiver;
  readonly workers: ServiceProcess[] = [];
  nats: NatsConnection | undefined;
  /** The output of the workers killed so far. */
  private readonly killedOutput: string[] = [];
  readonly feed: { topic: string; stream: string; consumer: string };

  /** `name` tells the consumer apart; `workerArgs` are added to every worker's flags. */
  constructor(
    name: string,
    private readonly workerArgs: string[] = [],
    private readonly count = 1,
  ) {
    const { topic, stream } = testStream();
    this.feed = { topic, stream, consumer: `${name}-${stream.toLowerCase()}` };
  }

  /** The first worker (the only one unless the stack was made with several). */
  get worker(): ServiceProcess | undefined {
    return this.workers[0];
  }

  async start(): Promise<this> {
    this.api = await startWebhooks({ args: ["--audit-topic", ""] });
    this.receiver = await new Receiver().start();
    this.nats = await connect({ servers: "nats://127.0.0.1:4222" });
    for (let i = 0; i < this.count; i++)
      this.workers.push(await startWorkerProcess(this.api, this.feed, this.workerArgs));
    return this;
  }

  /** Publishes every message at once (all in flight together, in stream order). */
  async publishAll(messages: unknown[]): Promise<void> {
    const js = this.nats!.jetstream();
    await Promise.all(messages.map((m) => js.publish(this.feed.topic, JSON.stringify(m))));
  }

  /** An ordered config for events of type `ledger.<type>`; returns its id. */
  async orderedConfig(type: string, extra: Record<string, unknown> = {}): Promise<string> {
    const created = await this.api.call("POST", "/configs", {
      endpoint: this.receiver.url,
      eventTypes: [`ledger.${type}`],
      ordering: { enabled: true },
      ...extra,
    });
    if (created.status !== 200) throw new Error(`create config: ${created.text}`);
    return created.body.data.id as string;
  }

  /** Kills worker `i` with SIGKILL and starts another in its place. */
  async restartWorker(i = 0): Promise<void> {
    const worker = this.workers[i];
    await worker?.stop("SIGKILL");
    if (worker) this.killedOutput.push(worker.output);
    this.workers[i] = await startWorkerProcess(this.api, this.feed, this.workerArgs);
  }

  /** The output of every worker so far: the killed ones first, in the order they died. */
  outputs(): string[] {
    return [...this.killedOutput, ...this.workers.map((w) => w.output)];
  }

  /** Log lines of every worker so far (killed ones first) matching `pattern`, with a line for each restart. */
  workerLines(pattern: RegExp): string[] {
    return this.outputs().flatMap((o, i) => [
      ...(i > 0 ? [`--- worker ${i + 1} started`] : []),
      ...o.split("\n").filter((l) => pattern.test(l)),
    ]);
  }

  async stop(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.stop()));
    await this.receiver?.stop();
    await this.api?.stop();
    await (await this.nats?.jetstreamManager())?.streams.delete(this.feed.stream).catch(() => {});
    await this.nats?.close();
  }
}

/**
 * `perKey` events for each of `keys` ordering keys (`key-<k>`), of type `ledger.<type>`, in
 * the order a kill test publishes them: the first event of every key, then the second, ...
 * Each carries its key and sequence number in its payload.
 */
export function orderedEvents(type: string, keys: number, perKey: number, prefix = type) {
  const events = [];
  for (let seq = 1; seq <= perKey; seq++)
    for (let key = 0; key < keys; key++)
      events.push({
        idempotency_key: `${prefix}-${key}-${seq}`,
        app: "ledger",
        type: type.toUpperCase(),
        ordering_key: `key-${key}`,
        payload: { key, seq },
      });
  return events;
}
