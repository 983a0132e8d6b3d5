import { setTimeout as sleep } from "node:timers/promises";
import {
  AckPolicy,
  type Consumer,
  type ConsumerMessages,
  connect,
  DeliverPolicy,
  type JetStreamManager,
  type JsMsg,
  type NatsConnection,
  type Subscription,
} from "nats";
import type { Logger } from "../../common/logger.js";
import { withoutCredentials } from "../../common/redact.js";
import { type NatsAuth, natsCredentials } from "./nats-auth.js";
import { consumerSettings, ensureStream, type StreamLimits, sameSettings } from "./nats-setup.js";
import { StallMonitor } from "./stall-monitor.js";
import {
  type AbandonedHandler,
  type BrokerConsumer,
  type BrokerPublisher,
  type MessageHandler,
  type Redelivery,
  redeliveryDelay,
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

/** Beyond a message's ack wait, for JetStream's own check of expired acknowledgements to run. */
const REDELIVERY_MARGIN_MS = 1_000;

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
 * max_deliver deliveries.
 */
export class NatsConsumer implements BrokerConsumer {
  private nc?: NatsConnection;
  private stopping = false;
  /** Aborted by stop(): ends a wait before the first fetch. */
  private readonly stopped = new AbortController();
  private readonly batches = new Set<ConsumerMessages>();
  private readonly advisories: Subscription[] = [];
  private readonly loops: Promise<void>[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private readonly monitors: StallMonitor[] = [];

  constructor(
    private readonly opts: NatsOptions & {
      durable: string;
      topics: string[];
      concurrency: number;
      redelivery: Redelivery;
    },
  ) {}

  async start(handler: MessageHandler, abandoned?: AbandonedHandler): Promise<void> {
    const { logger, topics, durable, concurrency, redelivery } = this.opts;
    this.nc = await connectNats(this.opts.url, this.opts.auth, logger, `webhooks-consumer-${durable}`);
    const jsm = await this.nc.jetstreamManager();
    const wanted = consumerSettings(redelivery, concurrency);
    for (const topic of topics) {
      const stream = await ensureStream(jsm, this.opts.stream, [topic], this.opts.limits);
      const name = `${durable}-${topic.replace(/[^A-Za-z0-9_-]/g, "_")}`;
      const existing = await jsm.consumers.info(stream, name).catch(() => undefined);
      if (!existing) {
        await jsm.consumers.add(stream, {
          durable_name: name,
          ack_policy: AckPolicy.Explicit,
          deliver_policy: DeliverPolicy.All,
          filter_subject: topic,
          ...wanted,
        });
      } else if (!sameSettings(existing.config, wanted)) {
        await jsm.consumers.update(stream, name, wanted);
        logger.info({ stream, consumer: name, ...redelivery }, "consumer brought to the redelivery flags");
      }
      if (abandoned) this.advisories.push(this.watchAbandoned(jsm, stream, name, abandoned));
      const monitor = new StallMonitor(
        `NATS consumer ${name}`,
        redelivery.stuckAfterMs,
        async () => (await jsm.consumers.info(stream, name)).num_pending,
        logger,
      );
      monitor.start();
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
      this.loops.push(this.pump(consumer, handler, monitor, ackWaitMs, holdMs));
      logger.info({ stream, consumer: name, topic }, "consuming from NATS JetStream");
    }
  }

  /**
   * Fetches only as many messages as there are free handler slots: a message
   * waiting in a client-side buffer would run out its ack wait (the backoff's
   * first step) and be counted as delivered again without being handled. Each
   * topic has its share of the process's concurrency. With the slots nearly all
   * busy (a burst), it waits until a quarter of them are free and fetches those
   * together: a fetch per freed slot cost a pull request, a subscription and its
   * end for every message.
   */
  private async pump(
    consumer: Consumer,
    handler: MessageHandler,
    monitor: StallMonitor,
    ackWaitMs: number,
    /** How long to wait before the first fetch (see start). */
    holdMs: number,
  ): Promise<void> {
    const { concurrency, topics, logger } = this.opts;
    const slots = Math.max(1, Math.floor(concurrency / topics.length));
    const refill = Math.max(1, Math.floor(slots / 4));
    const mine = new Set<Promise<void>>();
    if (holdMs > 0) await sleep(holdMs, undefined, { signal: this.stopped.signal }).catch(() => {});
    while (!this.stopping) {
      while (mine.size > slots - refill) await Promise.race(mine);
      if (this.stopping) break;
      try {
        const batch = await consumer.fetch({ max_messages: slots - mine.size, expires: 5000 });
        this.batches.add(batch);
        try {
          for await (const m of batch) {
            const work = this.dispatch(m, handler, monitor, ackWaitMs);
            mine.add(work);
            void work.finally(() => mine.delete(work));
          }
        } finally {
          this.batches.delete(batch);
        }
      } catch (err) {
        if (this.stopping) break;
        logger.warn({ err: (err as Error).message }, "fetching from JetStream failed: trying again");
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  }

  /** Runs the handler on one message and settles it; the promise ends when it is settled. */
  private dispatch(
    m: JsMsg,
    handler: MessageHandler,
    monitor: StallMonitor,
    ackWaitMs: number,
  ): Promise<void> {
    const { redelivery, logger } = this.opts;
    const msg = {
      topic: m.subject,
      data: m.data,
      deliveryCount: m.info.redeliveryCount,
      position: `nats:${m.info.stream}:${m.seq}`,
    };
    // A slow handler tells JetStream it is still at work, so the ack wait does not run out.
    const working = setInterval(() => m.working(), ackWaitMs / 2);
    const work = handler(msg)
      .then(() => {
        m.ack();
        monitor.progress();
      })
      .catch((err: Error) => {
        const delayMs = redeliveryDelay(redelivery, msg.deliveryCount);
        logger.warn(
          {
            topic: m.subject,
            position: msg.position,
            deliveries: msg.deliveryCount,
            delayMs,
            err: err.message,
          },
          "message handling failed: redelivering",
        );
        m.nak(delayMs);
      })
      .finally(() => clearInterval(working));
    const tracked: Promise<void> = work.finally(() => this.inFlight.delete(tracked));
    this.inFlight.add(tracked);
    return tracked;
  }

  /**
   * JetStream announces a message it stopped delivering after max_deliver; the
   * handler settles messages at their last delivery, so this only happens when
   * that delivery was never settled (a crash, a dead letter that could not be
   * written). The message is read back from the stream and handed over.
   */
  private watchAbandoned(
    jsm: JetStreamManager,
    stream: string,
    consumer: string,
    abandoned: AbandonedHandler,
  ): Subscription {
    const sub = this.nc!.subscribe(`$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.${stream}.${consumer}`);
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
          this.opts.logger.error(
            { position, err: (err as Error).message },
            "a message JetStream gave up on could not be dead-lettered; it stays in the stream at this position",
          );
        }
      }
    })();
    return sub;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.stopped.abort();
    for (const m of this.monitors) m.stop();
    await Promise.all([...this.batches].map((b) => b.close()));
    await Promise.all(this.loops);
    await Promise.all(this.inFlight);
    for (const a of this.advisories) a.unsubscribe();
    await this.nc?.drain();
  }

  async healthy(): Promise<void> {
    if (!this.nc || this.nc.isClosed()) throw new Error("not connected to NATS");
    // The client alone would say just "DISCONNECT" while it reconnects (it does so without end).
    await this.nc.flush().catch((err: Error) => {
      throw new Error(
        `NATS at ${withoutCredentials(this.opts.url)} unreachable, reconnecting: ${err.message}`,
      );
    });
    for (const m of this.monitors) m.check();
  }
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
