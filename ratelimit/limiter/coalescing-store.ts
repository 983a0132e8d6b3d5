// Coalesced increments of hot counters. While an increment of a key is in flight, the
// increments of that key that arrive meanwhile wait and then go as one INCRBY of their
// sum; its reply is split among them in arrival order (the first gets the count after
// its own addend, the last the reply), exactly what serial increments would return.
// A key without an increment in flight goes at once, with the rest of its decision in
// one write, so an idle or cold key waits for nothing; a hot key (every request of a
// route counting on one limit) costs one command per round trip instead of one per call.
// A queued batch leaves at the end of the event-loop turn after the one in which the
// key's reply came back, not from the reply's own callback. The reply is read in the
// middle of a turn; the rest of that turn reads the requests that arrived on the other
// connections, and the next turn those that arrived while this one answered the batch.
// Both join the batch instead of waiting a round trip for one of their own. While a batch
// waits, turns poll without blocking (setImmediate), so a quiet process loses a few
// microseconds, and a busy one sends fewer, larger batches (README, Coalesced increments).
// The batches that leave in one turn share one connection and one write when the store
// allows it (`together`), each with its own INCRBY, reply and failure: a request that
// counts on several hot limits costs one write and one reply to read, not one per limit.

import type { CounterOp, CounterStore } from "./counter-store.js";

interface Waiter {
  addend: number;
  resolve(count: number): void;
  reject(err: unknown): void;
}

/** The increments waiting for the key's in-flight one, sent as the next batch. */
interface Queue {
  op: CounterOp;
  waiters: Waiter[];
}

export class CoalescingCounterStore implements CounterStore {
  /** Keys with an increment in flight; the value is the queue of the next batch (null: none yet). */
  private readonly inflight = new Map<string, Queue | null>();
  /** Batches whose key's increment came back this turn (they keep taking in calls until sent). */
  private due: Queue[] = [];
  /** Batches whose key's increment came back last turn: they leave at the end of this one. */
  private after: Queue[] = [];
  private scheduled = false;

  constructor(private readonly inner: CounterStore) {}

  async increment(ops: CounterOp[]): Promise<number[]> {
    const out: number[] = new Array(ops.length);
    const now: number[] = [];
    const waits: Promise<unknown>[] = [];
    for (let i = 0; i < ops.length; i++) {
      const op = ops[i]!;
      if (!this.inflight.has(op.key)) {
        this.inflight.set(op.key, null);
        now.push(i);
        continue;
      }
      let queue = this.inflight.get(op.key);
      if (!queue) {
        queue = { op, waiters: [] };
        this.inflight.set(op.key, queue);
      }
      const waiters = queue.waiters;
      waits.push(
        new Promise<void>((resolve, reject) =>
          waiters.push({
            addend: op.addend,
            resolve: (count) => {
              out[i] = count;
              resolve();
            },
            reject,
          }),
        ),
      );
    }
    if (now.length) {
      const direct = now.length === ops.length ? ops : now.map((i) => ops[i]!);
      waits.push(
        this.inner.increment(direct).then(
          (counts) => {
            for (let j = 0; j < now.length; j++) out[now[j]!] = counts[j]!;
            for (const i of now) this.next(ops[i]!.key);
          },
          (err) => {
            for (const i of now) this.next(ops[i]!.key);
            throw err;
          },
        ),
      );
    }
    await Promise.all(waits);
    return out;
  }

  /** The key's increment came back: free the key, or send what queued up at the end of the next turn. */
  private next(key: string): void {
    const queue = this.inflight.get(key);
    if (!queue) {
      this.inflight.delete(key);
      return;
    }
    this.due.push(queue);
    this.schedule();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.endOfTurn());
  }

  private endOfTurn(): void {
    this.scheduled = false;
    const ready = this.after;
    this.after = this.due;
    this.due = [];
    // Sent together, and at once: from this setImmediate callback, a write left to the
    // turn's end would wait a whole loop iteration (pool.ts, together).
    if (ready.length && this.inner.together) this.inner.together(() => this.sendAll(ready));
    else this.sendAll(ready);
    if (this.after.length) this.schedule();
  }

  private sendAll(queues: Queue[]): void {
    for (const queue of queues) this.send(queue);
  }

  private send(queue: Queue): void {
    const key = queue.op.key;
    this.inflight.set(key, null);
    let total = 0;
    for (const w of queue.waiters) total += w.addend;
    this.inner.increment([{ ...queue.op, addend: total }]).then(
      ([count]) => {
        let running = count! - total;
        for (const w of queue.waiters) {
          running += w.addend;
          w.resolve(running);
        }
        this.next(key);
      },
      (err) => {
        for (const w of queue.waiters) w.reject(err);
        this.next(key);
      },
    );
  }

  get(keys: { key: string; perSecond: boolean }[]): Promise<number[]> {
    return this.inner.get(keys);
  }

  connected(): boolean {
    return this.inner.connected();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
