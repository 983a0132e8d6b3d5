import { setTimeout as sleep } from "node:timers/promises";
import type { Consumer, ConsumerMessages, JsMsg } from "nats";
import type { Logger } from "../../common/logger.js";
import type { StallMonitor } from "./stall-monitor.js";
import { type MessageHandler, type Redelivery, redeliveryDelay } from "./types.js";

// The fetch loop of one durable JetStream consumer and the handling of each message it hands
// out, shared by the single consumer of a topic (nats.ts) and the partitions of one
// (nats-partitions.ts).

/** Beyond a message's ack wait, for JetStream's own check of expired acknowledgements to run. */
export const REDELIVERY_MARGIN_MS = 1_000;

/**
 * Beyond a failed message's redelivery delay, how long it is still awaited: the margin
 * workers/ordered-lanes.ts holds its key for a late redelivery (HOLD_MARGIN_MS there).
 */
const AWAIT_MARGIN_MS = 30_000;

/** Unacknowledged messages gathered at most by one fetch (a consumer's max_ack_pending is 256). */
const MAX_GATHERED = 256;

/** How long one pull request waits at the server for messages. */
export const FETCH_EXPIRES_MS = 5_000;

export interface PumpOptions {
  consumer: Consumer;
  handler: MessageHandler;
  monitor: StallMonitor;
  ackWaitMs: number;
  redelivery: Redelivery;
  logger: Logger;
  /** Handler slots this pump may fill, read before each fetch. */
  slots: () => number;
  /** The messages being handled by every pump of the process (a stopping consumer waits for them). */
  inFlight: Set<Promise<void>>;
  /** Partitions: whether a message is this pump's to handle; the others are acknowledged at once. */
  mine?: (m: JsMsg) => boolean;
  /**
   * Partitions: whether this process still owns the pump's partition. While it does not, the
   * pump fetches nothing, hands nothing more over and stops telling JetStream it is at work on
   * the messages it holds, so that they come back to the next owner after their ack wait.
   */
  owned?: () => boolean;
  /**
   * Partitions: reads the consumer's last delivery sequence and its unacknowledged messages.
   * The pump then hands a message over only when every delivery of the consumer since then
   * came to it: a delivery it did not see went to a pull request of another process (one
   * that stopped between its ownership check and its pull, and sent the pull once it
   * resumed), and that message would come back only after newer ones were handed over here.
   * Its first fetch gathers the unacknowledged messages, which JetStream hands out again in
   * the order their ack waits ran out, and hands them over in the stream's order.
   */
  position?: () => Promise<{ delivered: number; unacknowledged: number }>;
  /**
   * The single consumer: the unacknowledged messages it found as it started (a process that
   * died left them). JetStream hands them out again in the order their ack waits ran out,
   * which need not be the stream's; the first fetch gathers them and hands them over sorted.
   */
  unacknowledgedAtStart?: number;
}

/**
 * Fetches only as many messages as there are free handler slots: a message
 * waiting in a client-side buffer would run out its ack wait (the backoff's
 * first step) and be counted as delivered again without being handled. With the
 * slots nearly all busy (a burst), it waits until a quarter of them are free and
 * fetches those together: a fetch per freed slot cost a pull request, a
 * subscription and its end for every message.
 */
export class Pump {
  private stopping = false;
  /** Aborted by stop(): ends a wait before the first fetch. */
  private readonly stopped = new AbortController();
  private batch: ConsumerMessages | undefined;
  /** This pump's messages being handled. */
  private readonly mine = new Set<Promise<void>>();
  private done: Promise<void> = Promise.resolve();
  /** How many messages the next fetch gathers and sorts before handing them over. */
  private gather = 0;
  /** With `position`: the delivery sequence the next message must carry, less one. */
  private delivered: number | undefined;
  /** A message was not seen or not taken in its turn: nothing more goes until the missed ones are back. */
  private gap = false;
  /** Messages whose handling failed, by stream sequence: when each should be back (epoch ms). */
  private readonly naked = new Map<number, number>();

  constructor(private readonly o: PumpOptions) {
    this.gather = Math.min(o.unacknowledgedAtStart ?? 0, MAX_GATHERED);
  }

  /** Starts the loop; `holdMs` is how long to wait before the first fetch. */
  start(holdMs: number): this {
    this.done = this.run(holdMs);
    return this;
  }

  /**
   * Ends the loop: the fetch under way is closed (the server drops a pull request whose
   * subscription is gone). Handlers already running go on; `settled` waits for them.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    this.stopped.abort();
    await this.batch?.close();
    await this.done;
  }

  /**
   * How many messages whose handling failed have not come back yet. Their keys are held in
   * this process (workers/ordered-lanes.ts) until they do: a partition handed over meanwhile
   * would let its next owner hand newer events of those keys over first.
   */
  awaitedRedeliveries(): number {
    const now = Date.now();
    for (const [seq, due] of this.naked) if (due < now) this.naked.delete(seq);
    return this.naked.size;
  }

  /** Resolves once every message this pump handed to its handler is settled. */
  async settled(): Promise<void> {
    while (this.mine.size > 0) await Promise.all(this.mine);
  }

  private async run(holdMs: number): Promise<void> {
    const { consumer, logger, slots } = this.o;
    if (holdMs > 0) await sleep(holdMs, undefined, { signal: this.stopped.signal }).catch(() => {});
    while (!this.stopping) {
      const free = slots();
      const refill = Math.max(1, Math.floor(free / 4));
      while (this.mine.size > free - refill) await Promise.race(this.mine);
      if (this.stopping) break;
      if (this.o.owned && !this.o.owned()) {
        await sleep(200, undefined, { signal: this.stopped.signal }).catch(() => {});
        continue;
      }
      try {
        if (this.o.position && (this.gap || this.delivered === undefined)) await this.resume();
        const gathering = this.gather > 0;
        const batch = await consumer.fetch({
          max_messages: gathering ? this.gather : Math.max(1, free - this.mine.size),
          expires: FETCH_EXPIRES_MS,
        });
        this.gather = 0;
        this.batch = batch;
        const held: JsMsg[] = [];
        try {
          for await (const m of batch) {
            if (!this.arrived(m)) continue;
            if (gathering) held.push(m);
            else this.take(m);
          }
        } finally {
          this.batch = undefined;
        }
        // Redelivered in the order their ack waits ran out (each message's own, as its
        // handler told JetStream it was at work), which need not be the stream's.
        const sorted = [...held].sort((a, b) => a.seq - b.seq);
        if (sorted.some((m, i) => m !== held[i]))
          logger.info(
            { messages: held.length, arrived: held.map((m) => m.seq).join(",") },
            "unacknowledged messages came back out of stream order: handing them over sorted",
          );
        for (const m of sorted) this.take(m);
      } catch (err) {
        if (this.stopping) break;
        logger.warn({ err: (err as Error).message }, "fetching from JetStream failed: trying again");
        await sleep(1000, undefined, { signal: this.stopped.signal }).catch(() => {});
      }
    }
  }

  /**
   * After a gap, once every message delivered meanwhile is due again (a pull request of
   * another process has expired, and the messages it took or this pump left come back
   * before newer ones): the delivery sequence to go on from, and how many to gather.
   */
  private async resume(): Promise<void> {
    if (this.gap) {
      this.o.logger.warn(
        { waitMs: FETCH_EXPIRES_MS + this.o.ackWaitMs + 2 * REDELIVERY_MARGIN_MS },
        "a delivery of this NATS partition went elsewhere or was left: waiting for it to come back before handing over newer messages",
      );
      await sleep(FETCH_EXPIRES_MS + this.o.ackWaitMs + 2 * REDELIVERY_MARGIN_MS, undefined, {
        signal: this.stopped.signal,
      }).catch(() => {});
    }
    const { delivered, unacknowledged } = await this.o.position!();
    this.delivered = delivered;
    this.gather = Math.min(unacknowledged, MAX_GATHERED);
    this.gap = false;
  }

  /**
   * Whether a fetched message came in its turn (with `position`: the consumer delivered
   * nothing elsewhere since the last one, and the partition is still this process's). A
   * message out of turn is left unacknowledged, as every message after it: all come back,
   * in order, after the pause.
   */
  private arrived(m: JsMsg): boolean {
    if (this.stopping || this.gap) return false;
    if (this.delivered === undefined) return true;
    if (m.info.deliverySequence !== this.delivered + 1 || (this.o.owned && !this.o.owned())) {
      this.gap = true;
      void this.batch?.close();
      return false;
    }
    this.delivered = m.info.deliverySequence;
    return true;
  }

  /** One fetched message: handled, acknowledged at once (another partition's), or left to come back. */
  private take(m: JsMsg): void {
    if (this.stopping || this.gap) return;
    // Left unacknowledged: the partition's next owner gets it again, before newer messages.
    if (this.o.owned && !this.o.owned()) return;
    if (this.o.mine && !this.o.mine(m)) {
      m.ack();
      return;
    }
    this.naked.delete(m.seq);
    const work = dispatch(m, this.o, (delayMs) => {
      // Past its delay and the lanes' own margin for a late redelivery, it is not awaited any more.
      if (this.o.position) this.naked.set(m.seq, Date.now() + delayMs + AWAIT_MARGIN_MS);
    });
    this.mine.add(work);
    void work.finally(() => this.mine.delete(work));
  }
}

/** Runs the handler on one message and settles it; the promise ends when it is settled. */
function dispatch(m: JsMsg, o: PumpOptions, naked: (delayMs: number) => void): Promise<void> {
  const { redelivery, logger, monitor } = o;
  const msg = {
    topic: m.subject,
    data: m.data,
    deliveryCount: m.info.redeliveryCount,
    position: `nats:${m.info.stream}:${m.seq}`,
  };
  // A slow handler tells JetStream it is still at work, so the ack wait does not run out.
  const working = setInterval(() => {
    if (!o.owned || o.owned()) m.working();
  }, o.ackWaitMs / 2);
  const work = o
    .handler(msg)
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
      naked(delayMs);
    })
    .finally(() => clearInterval(working));
  const tracked: Promise<void> = work.finally(() => o.inFlight.delete(tracked));
  o.inFlight.add(tracked);
  return tracked;
}
