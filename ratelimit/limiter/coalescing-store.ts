// Coalesced increments of hot counters. While an increment of a key is in flight, the
// increments of that key that arrive meanwhile wait and then go as one INCRBY of their
// sum; its reply is split among them in arrival order (the first gets the count after
// its own addend, the last the reply), exactly what serial increments would return.
// A key without an increment in flight goes at once, with the rest of its decision in
// one write, so an idle or cold key waits for nothing; a hot key (every request of a
// route counting on one limit) costs one command per round trip instead of one per call.
// A queued batch leaves at the end of the event-loop turn in which the reply came back
// (setImmediate), not from the reply's own callback: by then the turn has read every
// request that had already arrived on the other connections, and those join the batch
// instead of waiting for the next round trip. That costs no timer and no extra turn.

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
  /** Keys whose increment came back with a batch queued, sent at the end of this turn. */
  private due: string[] = [];

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

  /** The key's increment came back: free the key, or send what queued up at the end of the turn. */
  private next(key: string): void {
    if (!this.inflight.get(key)) {
      this.inflight.delete(key);
      return;
    }
    if (this.due.push(key) === 1) setImmediate(() => this.sendDue());
  }

  /** Sends the batch of every key that came back this turn, each as its own increment. */
  private sendDue(): void {
    const keys = this.due;
    this.due = [];
    for (const key of keys) this.send(key);
  }

  private send(key: string): void {
    const queue = this.inflight.get(key);
    if (!queue) {
      this.inflight.delete(key);
      return;
    }
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
