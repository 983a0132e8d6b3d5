// Deliveries of this process with a send in flight, counted so that new deliveries wait
// for one to finish (--max-deliveries-in-flight). A delivery counts from its eager start
// (its workflow then runs here) until its send's outcome reaches the workflow; a retry
// that wakes from its timer counts again for its send. The workflow reports both ends
// through sinks (workflows/delivery.ts). Without the bound a burst starts workflows far
// faster than their sends finish: hundreds of send tasks pile up in the server's matching,
// which stores them as backlog and dispatches them one by one instead of handing each to
// a waiting poll (measured on the production server in bench/delivery;
// docs/performance/delivery.md).
//
// What the bound is for is the sends waiting in Temporal, not a receiver taking its time.
// So a send stops counting once its POST has been out for a second, when it runs here, and
// in any case 5 s after it started: its POST may run in another process (any process polls
// the sends queue), which this one does not see. A slow receiver then does not hold back
// the deliveries of every other config for longer than that. Bounded, a send's time in
// flight is about 32 / the delivery rate (2 s at 16/s here), well under the 5 s. The same
// expiry forgets a workflow that left this process mid-send (evicted from the cache, its
// next task run by another process), which never reports its end here.

/** A send that started this long ago stops counting, wherever its POST runs. */
export const IN_FLIGHT_EXPIRY_MS = 5_000;
/** A POST out this long (seen here) is in its receiver's hands: it stops counting. */
export const SLOW_POST_MS = 1_000;

/** What a start's reservation found (DeliveriesInFlight.reserve). */
export interface Reservation {
  waited: boolean;
  counted: boolean;
}

export class DeliveriesInFlight {
  /** Workflow id → when its entry stops counting. */
  private readonly entries = new Map<string, number>();
  private readonly waiters: (() => void)[] = [];
  private sweepTimer: NodeJS.Timeout | undefined;
  /** When sweepTimer fires: never after the earliest expiry while starts wait. */
  private sweepDue = Number.POSITIVE_INFINITY;

  constructor(
    readonly max: number,
    private readonly expiryMs = IN_FLIGHT_EXPIRY_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** Deliveries counted now (an entry past its expiry no longer counts, swept or not). */
  get size(): number {
    this.dropExpired();
    return this.entries.size;
  }

  /** Starts waiting for a delivery to finish its send. */
  get waiting(): number {
    return this.waiters.length;
  }

  /**
   * Counts the delivery `workflowId` about to start, once fewer than `max` are in flight or
   * after `maxWaitMs` (then it goes ahead anyway). `waited`: it had to wait; `counted`: this
   * call added the entry (false when the same delivery was counted already, e.g. a
   * redelivered event whose first start runs here: a failed start then removes nothing).
   */
  reserve(workflowId: string, maxWaitMs: number): Promise<Reservation> {
    // Behind starts already waiting, a newcomer waits its turn.
    if (this.waiters.length === 0 && this.hasRoom())
      return Promise.resolve({ waited: false, counted: this.add(workflowId) });
    return new Promise((resolve) => {
      const grant = () => {
        clearTimeout(timer);
        resolve({ waited: true, counted: this.add(workflowId) });
      };
      const timer = setTimeout(() => {
        const i = this.waiters.indexOf(grant);
        if (i >= 0) this.waiters.splice(i, 1);
        resolve({ waited: true, counted: this.add(workflowId) });
      }, maxWaitMs);
      this.waiters.push(grant);
      if (!this.sweepTimer) this.sweepAt(this.earliestExpiry());
    });
  }

  /** A send of `workflowId` is under way (or its delivery was just started here); true when newly counted. */
  add(workflowId: string): boolean {
    // Already counted (its start, or its POST already out): the entry stands as it is.
    if (this.entries.has(workflowId)) return false;
    this.entries.set(workflowId, this.now() + this.expiryMs);
    return true;
  }

  /** `workflowId`'s POST left this process: after SLOW_POST_MS more it no longer counts. */
  posting(workflowId: string): void {
    const counted = this.entries.get(workflowId);
    if (counted === undefined) return;
    const expires = Math.min(counted, this.now() + SLOW_POST_MS);
    this.entries.set(workflowId, expires);
    this.sweepAt(expires);
  }

  /** `workflowId`'s send is over, or its start did not bring its workflow here. */
  remove(workflowId: string): void {
    if (this.entries.delete(workflowId)) this.wakeOne();
  }

  private hasRoom(): boolean {
    if (this.entries.size < this.max) return true;
    this.dropExpired();
    return this.entries.size < this.max;
  }

  private dropExpired(): void {
    const now = this.now();
    for (const [id, expires] of this.entries) if (expires <= now) this.entries.delete(id);
  }

  /** A freed place goes to the longest-waiting start, which takes it at once. */
  private wakeOne(): void {
    if (this.entries.size < this.max) this.waiters.shift()?.();
  }

  /** While starts wait, frees their places as entries stop counting, not only as sends end. */
  private sweepAt(due: number): void {
    if (this.waiters.length === 0 || due === Number.POSITIVE_INFINITY) return;
    if (this.sweepTimer && this.sweepDue <= due) return;
    clearTimeout(this.sweepTimer);
    this.sweepDue = due;
    this.sweepTimer = setTimeout(() => this.sweep(), Math.max(0, due - this.now()) + 1);
    this.sweepTimer.unref();
  }

  private sweep(): void {
    this.sweepTimer = undefined;
    this.sweepDue = Number.POSITIVE_INFINITY;
    this.hasRoom();
    while (this.waiters.length > 0 && this.entries.size < this.max) this.waiters.shift()!();
    this.sweepAt(this.earliestExpiry());
  }

  private earliestExpiry(): number {
    let next = Number.POSITIVE_INFINITY;
    for (const expires of this.entries.values()) if (expires < next) next = expires;
    return next;
  }
}
