import { connect, type JetStreamManager, type NatsConnection, type Subscription } from "nats";
import type { Logger } from "../../common/logger.js";
import { withoutCredentials } from "../../common/redact.js";
import { type NatsAuth, natsCredentials } from "./nats-auth.js";
import { Pump, REDELIVERY_MARGIN_MS } from "./nats-pump.js";
import { consumerSettings, ensureConsumer, ensureStream, type StreamLimits } from "./nats-setup.js";
import { StallMonitor } from "./stall-monitor.js";
import type {
  AbandonedHandler,
  BrokerConsumer,
  BrokerPublisher,
  MessageHandler,
  Redelivery,
} from "./types.js";

export interface NatsOptions {
  url: string;
  /** Credentials (flags), else those in the URL. */
  auth: NatsAuth;
  /** Stream created for the subjects when no stream holds them yet. */
  stream: string;
  /** Limits kept on that stream (not on streams the operator provisioned under other names). */
  limits: StreamLimits;
  logger: Logger;
}

export async function connectNats(
  url: string,
  auth: NatsAuth,
  logger: Logger,
  name: string,
): Promise<NatsConnection> {
  const safeUrl = withoutCredentials(url);
  try {
    const { servers, options } = await natsCredentials(url, auth);
    const nc = await connect({
      servers,
      name,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 2000,
      ...options,
    });
    logger.info({ url: safeUrl }, "connected to NATS");
    void (async () => {
      for await (const s of nc.status()) {
        if (s.type === "disconnect" || s.type === "reconnect")
          logger.warn({ url: safeUrl, event: s.type }, "NATS connection");
      }
    })();
    return nc;
  } catch (err) {
    throw new Error(`cannot reach NATS at ${safeUrl}: ${(err as Error).message}`);
  }
}

interface MaxDeliveriesAdvisory {
  stream: string;
  stream_seq: number;
  deliveries: number;
}

/**
 * Durable JetStream pull consumers over the topics, one per topic (a single
 * consumer with several filter subjects needs NATS 2.10; Debian ships 2.9).
 * Explicit acks; a failed handler naks the message with the redelivery
 * backoff's delay (JetStream 2.9 redelivers a plain nak at once), a message left
 * unacknowledged comes back after ack_wait, and JetStream stops after
 * max_deliver deliveries. With --nats-partitions above 1, nats-partitions.ts
 * consumes instead.
 */
export class NatsConsumer implements BrokerConsumer {
  private nc?: NatsConnection;
  private readonly advisories: Subscription[] = [];
  private readonly pumps: Pump[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private readonly monitors: StallMonitor[] = [];

  constructor(private readonly opts: NatsConsumerOptions) {}

  async start(handler: MessageHandler, abandoned?: AbandonedHandler): Promise<void> {
    const { logger, topics, durable, concurrency, redelivery } = this.opts;
    this.nc = await connectNats(this.opts.url, this.opts.auth, logger, `webhooks-consumer-${durable}`);
    const jsm = await this.nc.jetstreamManager();
    const wanted = consumerSettings(redelivery, concurrency);
    for (const topic of topics) {
      const stream = await ensureStream(jsm, this.opts.stream, [topic], this.opts.limits);
      const name = consumerName(durable, topic);
      const existing = await ensureConsumer(jsm, stream, name, topic, wanted, logger);
      if (abandoned) this.advisories.push(watchAbandoned(this.nc, jsm, stream, name, abandoned, logger));
      const monitor = consumerMonitor(jsm, stream, name, redelivery, logger);
      this.monitors.push(monitor);
      const consumer = await this.nc.jetstream().consumers.get(stream, name);
      const ackWaitMs = Number(wanted.ack_wait) / 1e6;
      // Messages delivered to a process that died come back only once their ack wait runs
      // out, and JetStream then serves them before new ones. Fetching at once would hand
      // over the later events of an ordering key before them: wait until they are due.
      const unacked = existing?.num_ack_pending ?? 0;
      const holdMs = unacked > 0 ? ackWaitMs + REDELIVERY_MARGIN_MS : 0;
      if (holdMs > 0)
        logger.info(
          { stream, consumer: name, unacknowledged: unacked, waitMs: holdMs },
          "messages delivered earlier are unacknowledged: waiting for their redelivery before new messages",
        );
      // Each topic has its share of the process's concurrency.
      const slots = Math.max(1, Math.floor(concurrency / topics.length));
      const pump = new Pump({
        consumer,
        handler,
        monitor,
        ackWaitMs,
        redelivery,
        logger,
        slots: () => slots,
        inFlight: this.inFlight,
        unacknowledgedAtStart: unacked,
      });
      this.pumps.push(pump.start(holdMs));
      logger.info({ stream, consumer: name, topic }, "consuming from NATS JetStream");
    }
  }

  async stop(): Promise<void> {
    for (const m of this.monitors) m.stop();
    await Promise.all(this.pumps.map((p) => p.stop()));
    await Promise.all(this.inFlight);
    for (const a of this.advisories) a.unsubscribe();
    await this.nc?.drain();
  }

  async healthy(): Promise<void> {
    await reachable(this.nc, this.opts.url);
    for (const m of this.monitors) m.check();
  }
}

/** What a NATS consumer is opened with: the connection, the durable name, topics and handling. */
export interface NatsConsumerOptions extends NatsOptions {
  durable: string;
  topics: string[];
  concurrency: number;
  redelivery: Redelivery;
}

/** The durable consumer of `topic` (a subject may hold characters a consumer name may not). */
export const consumerName = (durable: string, topic: string): string =>
  `${durable}-${topic.replace(/[^A-Za-z0-9_-]/g, "_")}`;

/** The watch reporting the consumer stuck: messages waiting for it and none settled. */
export function consumerMonitor(
  jsm: JetStreamManager,
  stream: string,
  name: string,
  redelivery: Redelivery,
  logger: Logger,
): StallMonitor {
  const monitor = new StallMonitor(
    `NATS consumer ${name}`,
    redelivery.stuckAfterMs,
    async () => (await jsm.consumers.info(stream, name)).num_pending,
    logger,
  );
  monitor.start();
  return monitor;
}

/** Throws unless the connection answers. */
export async function reachable(nc: NatsConnection | undefined, url: string): Promise<void> {
  if (!nc || nc.isClosed()) throw new Error("not connected to NATS");
  // Bytes arriving from the server also prove it alive: a consumer working through a burst of
  // large messages reads its PONG only after every byte the server queued before it, which on
  // a loaded machine took longer than the health timeout while the broker was fine.
  const before = nc.stats().inBytes;
  let poll: NodeJS.Timeout | undefined;
  const flowing = new Promise<void>((resolve) => {
    const end = Date.now() + FLOWING_WATCH_MS;
    poll = setInterval(() => {
      if (nc.stats().inBytes > before) resolve();
      if (nc.stats().inBytes > before || Date.now() > end) clearInterval(poll);
    }, 100);
  });
  try {
    // The client alone would say just "DISCONNECT" while it reconnects (it does so without end).
    await Promise.race([
      nc.flush().catch((err: Error) => {
        throw new Error(`NATS at ${withoutCredentials(url)} unreachable, reconnecting: ${err.message}`);
      }),
      flowing,
    ]);
  } finally {
    clearInterval(poll);
  }
}

/** How long a health check watches for bytes from the server (its caller times out sooner). */
const FLOWING_WATCH_MS = 5_000;

/**
 * JetStream announces a message it stopped delivering after max_deliver; the
 * handler settles messages at their last delivery, so this only happens when
 * that delivery was never settled (a crash, a dead letter that could not be
 * written). The message is read back from the stream and handed over.
 */
export function watchAbandoned(
  nc: NatsConnection,
  jsm: JetStreamManager,
  stream: string,
  consumer: string,
  abandoned: AbandonedHandler,
  logger: Logger,
): Subscription {
  const sub = nc.subscribe(`$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.${stream}.${consumer}`);
  void (async () => {
    for await (const advisory of sub) {
      const a = advisory.json<MaxDeliveriesAdvisory>();
      const position = `nats:${a.stream}:${a.stream_seq}`;
      try {
        const stored = await jsm.streams.getMessage(stream, { seq: a.stream_seq });
        await abandoned(
          { topic: stored.subject, data: stored.data, deliveryCount: a.deliveries, position },
          `JetStream stopped delivering it after ${a.deliveries} deliveries without an acknowledgement`,
        );
      } catch (err) {
        logger.error(
          { position, err: (err as Error).message },
          "a message JetStream gave up on could not be dead-lettered; it stays in the stream at this position",
        );
      }
    }
  })();
  return sub;
}

/** Publishes JSON messages to JetStream subjects (a stream is ensured per subject on first use). */
export class NatsPublisher implements BrokerPublisher {
  private readonly ready = new Map<string, Promise<unknown>>();

  private constructor(
    private readonly nc: NatsConnection,
    private readonly jsm: JetStreamManager,
    private readonly opts: NatsOptions,
  ) {}

  static async connect(opts: NatsOptions): Promise<NatsPublisher> {
    const nc = await connectNats(opts.url, opts.auth, opts.logger, "webhooks-publisher");
    return new NatsPublisher(nc, await nc.jetstreamManager(), opts);
  }

  async publish(topic: string, message: unknown): Promise<void> {
    let ready = this.ready.get(topic);
    if (!ready) {
      ready = ensureStream(this.jsm, this.opts.stream, [topic], this.opts.limits);
      this.ready.set(topic, ready);
      ready.catch(() => this.ready.delete(topic));
    }
    await ready;
    await this.nc.jetstream().publish(topic, JSON.stringify(message));
  }

  close(): Promise<void> {
    return this.nc.drain();
  }
}
