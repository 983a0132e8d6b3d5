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
// microseconds, and a busy one sends fewer, larger batches (docs/performance/ratelimit.md#coalesced-increments-and-shared-writes).
// The batches that leave in one turn share one connection and one write when the store
// allows it (`together`), each with its own INCRBY, reply and failure: a request that
// counts on several hot limits costs one write and one reply to read, not one per limit.

import type { CounterOp, CounterStore } from "./counter-store.js";

/** One `increment` call: its counts, filled in as its keys' replies come back. */
class Counts {
  private left: number;
  private failed = false;
  readonly promise: Promise<number[]>;
  private resolve!: (counts: number[]) => void;
  private reject!: (err: unknown) => void;

  constructor(readonly out: number[]) {
    this.left = out.length;
    this.promise = new Promise<number[]>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    if (this.left === 0) this.resolve(out);
  }

  set(i: number, count: number): void {
    this.out[i] = count;
    if (--this.left === 0 && !this.failed) this.resolve(this.out);
  }

  fail(err: unknown): void {
    if (this.failed) return;
    this.failed = true;
    this.reject(err);
  }
}

/** An increment waiting for its key's in-flight one: where its count goes. */
interface Waiter {
  addend: number;
  counts: Counts;
  index: number;
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

  increment(ops: CounterOp[]): Promise<number[]> {
    const n = ops.length;
    const counts = new Counts(new Array(n));
    // The ops that go now (their keys had nothing in flight), by their index in `ops`.
    let now: number[] | undefined;
    for (let i = 0; i < n; i++) {
      const op = ops[i]!;
      if (!this.inflight.has(op.key)) {
        this.inflight.set(op.key, null);
        now ??= [];
        now.push(i);
        continue;
      }
      let queue = this.inflight.get(op.key);
      if (!queue) {
        queue = { op, waiters: [] };
        this.inflight.set(op.key, queue);
      }
      queue.waiters.push({ addend: op.addend, counts, index: i });
    }
    if (now) this.direct(ops, now, counts);
    return counts.promise;
  }

  /** Sends the ops at `now` (all of `ops` when they all go) at once, and frees their keys after. */
  private direct(ops: CounterOp[], now: number[], counts: Counts): void {
    const sent = now.length === ops.length ? ops : now.map((i) => ops[i]!);
    this.inner.increment(sent).then(
      (replies) => {
        for (let j = 0; j < now.length; j++) counts.set(now[j]!, replies[j]!);
        for (const i of now) this.next(ops[i]!.key);
      },
      (err) => {
        counts.fail(err);
        for (const i of now) this.next(ops[i]!.key);
      },
    );
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
          w.counts.set(w.index, running);
        }
        this.next(key);
      },
      (err) => {
        for (const w of queue.waiters) w.counts.fail(err);
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
