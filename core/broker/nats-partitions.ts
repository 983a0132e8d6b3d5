import { setTimeout as sleep } from "node:timers/promises";
import type { JetStreamManager, NatsConnection, Subscription } from "nats";
import type { Logger } from "../../common/logger.js";
import {
  connectNats,
  consumerMonitor,
  consumerName,
  type NatsConsumerOptions,
  reachable,
  watchAbandoned,
} from "./nats.js";
import { FETCH_EXPIRES_MS, Pump, REDELIVERY_MARGIN_MS } from "./nats-pump.js";
import { consumerSettings, ensureConsumer, ensureStream } from "./nats-setup.js";
import { lockGroup, PartitionLocks, type PartitionMetrics } from "./partition-locks.js";
import { partitionOf } from "./partitions.js";
import type { StallMonitor } from "./stall-monitor.js";
import type { AbandonedHandler, BrokerConsumer, MessageHandler } from "./types.js";

// --nats-partitions N above 1: the events of one ordering key handed over by one process at a
// time, whatever the number of consuming processes. Each topic has N durable consumers, each
// over the whole topic; the process owning partition p (partition-locks.ts) consumes the
// p-th, hands over the messages whose (tenant, ordering key) hash to p (partitions.ts) and
// acknowledges the others at once. A partition changes hands only once its former owner's
// messages are settled (it gave it up) or due again (it died or stopped), so JetStream hands
// them to the new owner before any newer one.

export interface PartitionedOptions extends NatsConsumerOptions {
  /** --nats-partitions. */
  partitions: number;
  /** The PostgreSQL holding the partition locks. */
  connString: string;
  metrics: PartitionMetrics;
}

/** A partition this process owns: what consumes it. */
interface Owned {
  /** Aborted when it is given up or lost: ends the wait before its first fetch. */
  abort: AbortController;
  pumps: Pump[];
  monitors: StallMonitor[];
  advisories: Subscription[];
  /** Resolves once its pumps run, or it was given up or lost first. */
  ready: Promise<void>;
}

/** The durable consumer of partition `p` of `count` over a topic (`base`: its unpartitioned name). */
export const partitionConsumerName = (base: string, p: number, count: number): string =>
  `${base}-p${p}of${count}`;

export class PartitionedNatsConsumer implements BrokerConsumer {
  private nc?: NatsConnection;
  private jsm?: JetStreamManager;
  private locks?: PartitionLocks;
  /** Topic → its stream. */
  private readonly streams = new Map<string, string>();
  private readonly owned = new Map<number, Owned>();
  private readonly inFlight = new Set<Promise<void>>();
  private handler: MessageHandler = async () => {};
  private abandoned: AbandonedHandler | undefined;
  private ackWaitMs = 0;

  constructor(private readonly opts: PartitionedOptions) {}

  async start(handler: MessageHandler, abandoned?: AbandonedHandler): Promise<void> {
    const { logger, topics, durable, concurrency, redelivery, partitions } = this.opts;
    this.handler = handler;
    this.abandoned = abandoned;
    this.nc = await connectNats(this.opts.url, this.opts.auth, logger, `webhooks-consumer-${durable}`);
    const jsm = await this.nc.jetstreamManager();
    this.jsm = jsm;
    const wanted = consumerSettings(redelivery, concurrency);
    this.ackWaitMs = Number(wanted.ack_wait) / 1e6;
    for (const topic of topics) {
      const stream = await ensureStream(jsm, this.opts.stream, [topic], this.opts.limits);
      this.streams.set(topic, stream);
      const base = consumerName(durable, topic);
      const names = Array.from({ length: partitions }, (_, p) => partitionConsumerName(base, p, partitions));
      const missing = await Promise.all(
        names.map((n) =>
          jsm.consumers.info(stream, n).then(
            () => false,
            () => true,
          ),
        ),
      );
      const startSeq = missing.some(Boolean) ? await startSequence(jsm, stream, base) : undefined;
      for (const name of names) await ensureConsumer(jsm, stream, name, topic, wanted, logger, startSeq);
    }
    this.locks = new PartitionLocks({
      connString: this.opts.connString,
      group: lockGroup(this.opts.stream, durable),
      count: partitions,
      logger,
      metrics: this.opts.metrics,
      events: {
        acquired: (p) => this.acquired(p),
        release: (p) => this.release(p),
        releasable: (p) => (this.owned.get(p)?.pumps ?? []).every((pump) => pump.awaitedRedeliveries() === 0),
        lost: (ps) => this.lost(ps),
      },
    });
    await this.locks.start();
    logger.info(
      { topics, partitions, consumers: `${consumerName(durable, topics[0] ?? "")}-p<n>of${partitions}` },
      "consuming from NATS JetStream in partitions",
    );
  }

  private acquired(p: number): void {
    const entry: Owned = {
      abort: new AbortController(),
      pumps: [],
      monitors: [],
      advisories: [],
      ready: Promise.resolve(),
    };
    this.owned.set(p, entry);
    entry.ready = Promise.all(
      [...this.streams].map(([topic, stream]) => this.consume(p, entry, topic, stream)),
    )
      .then(() => {
        if (!entry.abort.signal.aborted) this.opts.logger.info({ partition: p }, "consuming NATS partition");
      })
      .catch(() => {});
  }

  /** Starts consuming the partition's consumer of a topic once its former owner's messages are due again. */
  private async consume(p: number, entry: Owned, topic: string, stream: string): Promise<void> {
    const { logger, durable, partitions, redelivery, concurrency, topics } = this.opts;
    const name = partitionConsumerName(consumerName(durable, topic), p, partitions);
    const signal = entry.abort.signal;
    for (;;) {
      try {
        const consumer = await this.nc!.jetstream().consumers.get(stream, name);
        await settle(this.jsm!, stream, name, this.ackWaitMs, signal, logger);
        if (signal.aborted) return;
        if (this.abandoned)
          entry.advisories.push(watchAbandoned(this.nc!, this.jsm!, stream, name, this.abandoned, logger));
        const monitor = consumerMonitor(this.jsm!, stream, name, redelivery, logger);
        entry.monitors.push(monitor);
        const pump = new Pump({
          consumer,
          handler: this.handler,
          monitor,
          ackWaitMs: this.ackWaitMs,
          redelivery,
          logger,
          slots: () => Math.max(1, Math.floor(concurrency / (topics.length * Math.max(1, this.owned.size)))),
          inFlight: this.inFlight,
          mine: (m) => partitionOf(m.data, partitions) === p,
          owned: () => this.locks?.holds(p) === true,
          position: async () => {
            const info = await this.jsm!.consumers.info(stream, name);
            return { delivered: info.delivered.consumer_seq, unacknowledged: info.num_ack_pending };
          },
        });
        entry.pumps.push(pump.start(0));
        return;
      } catch (err) {
        if (signal.aborted) return;
        logger.warn(
          { partition: p, consumer: name, err: (err as Error).message },
          "cannot consume NATS partition yet",
        );
        await sleep(1000, undefined, { signal }).catch(() => {});
      }
    }
  }

  /** Gives a partition up: no more fetches, its messages settled and their acknowledgements sent. */
  private async release(p: number): Promise<void> {
    const entry = this.owned.get(p);
    if (!entry) return;
    entry.abort.abort();
    await entry.ready;
    for (const m of entry.monitors) m.stop();
    await Promise.all(entry.pumps.map((pump) => pump.stop()));
    await Promise.all(entry.pumps.map((pump) => pump.settled()));
    for (const a of entry.advisories) a.unsubscribe();
    await this.nc?.flush();
    this.owned.delete(p);
  }

  /** The partitions may be another process's already: stop fetching them at once. */
  private lost(partitions: number[]): void {
    for (const p of partitions) {
      const entry = this.owned.get(p);
      if (!entry) continue;
      this.owned.delete(p);
      entry.abort.abort();
      void entry.ready.then(async () => {
        for (const m of entry.monitors) m.stop();
        for (const a of entry.advisories) a.unsubscribe();
        await Promise.all(entry.pumps.map((pump) => pump.stop()));
      });
    }
  }

  async stop(): Promise<void> {
    this.locks?.freeze();
    const entries = [...this.owned.values()];
    for (const e of entries) e.abort.abort();
    await Promise.all(entries.map((e) => e.ready));
    for (const e of entries) for (const m of e.monitors) m.stop();
    await Promise.all(entries.flatMap((e) => e.pumps.map((pump) => pump.stop())));
    await Promise.all(this.inFlight);
    for (const e of entries) for (const a of e.advisories) a.unsubscribe();
    await this.nc?.drain();
    await this.locks?.close();
  }

  /** Throws as the unpartitioned consumer does; else says which partitions this process owns. */
  async healthy(): Promise<string> {
    await reachable(this.nc, this.opts.url);
    for (const e of this.owned.values()) for (const m of e.monitors) m.check();
    return this.locks?.describe() ?? "starting";
  }
}

/**
 * Waits until nothing of the partition's former owner is pending on its consumer: no pull
 * request of it still waiting at the server (a process that stopped rather than died keeps
 * one for up to FETCH_EXPIRES_MS, and it would take messages), and its unacknowledged
 * messages due again (JetStream then hands them out before newer ones).
 */
async function settle(
  jsm: JetStreamManager,
  stream: string,
  name: string,
  ackWaitMs: number,
  signal: AbortSignal,
  logger: Logger,
): Promise<void> {
  for (;;) {
    const info = await jsm.consumers.info(stream, name);
    if (signal.aborted) return;
    const waitMs =
      info.num_waiting > 0
        ? FETCH_EXPIRES_MS + REDELIVERY_MARGIN_MS
        : info.num_ack_pending > 0
          ? ackWaitMs + REDELIVERY_MARGIN_MS
          : 0;
    if (waitMs === 0) return;
    logger.info(
      { consumer: name, pullRequests: info.num_waiting, unacknowledged: info.num_ack_pending, waitMs },
      "the partition's former owner left pull requests or unacknowledged messages: waiting for them to end or come back",
    );
    await sleep(waitMs, undefined, { signal }).catch(() => {});
    if (info.num_waiting === 0) return;
  }
}

/**
 * Where a topic's new partition consumers start: after the messages every consumer of the
 * topic so far (the unpartitioned one, another partition count's) acknowledged, so that a
 * switch to partitions neither reads the whole stream again nor skips a message; none
 * (the stream's first message) when there is no such consumer.
 */
async function startSequence(
  jsm: JetStreamManager,
  stream: string,
  base: string,
): Promise<number | undefined> {
  const floors: number[] = [];
  for await (const c of await jsm.consumers.list(stream)) {
    if (c.name === base || new RegExp(`^${base.replace(/[^\w]/g, "\\$&")}-p\\d+of\\d+$`).test(c.name))
      floors.push(c.ack_floor.stream_seq + 1);
  }
  return floors.length > 0 ? Math.min(...floors) : undefined;
}
