// --send-mode local-first (the default): a delivery's first send runs inside the workflow
// worker as a local activity, the fast path, and moves to the sends queue, the isolated
// path, when it has no answer within its budget. The POST is never cut short: one that
// outlives the budget goes on here, detached from its activity (its send claim keeps a
// second execution from POSTing the same attempt), and tells the workflow once its row is
// written. A config whose first send missed the budget or failed sends its next first
// sends through the queue for a while, so a hanging receiver costs the workflow worker one
// budget per cool-down, not one per delivery.

/** How long a config whose local first send missed its budget or failed uses the queue. */
export const LOCAL_FIRST_COOL_DOWN_MS = 60_000;
/** Configs remembered as cooling down at most (the oldest are forgotten first). */
const MAX_COOLING = 10_000;

export class LocalFirstSends {
  /** Config id → until when (ms) and why its first sends use the queue. */
  private readonly cooling = new Map<string, { until: number; why: string }>();
  private readonly detached = new Set<Promise<unknown>>();

  constructor(
    /** Detached POSTs at most (--max-concurrent-sends): beyond, first sends go to the queue at once. */
    private readonly maxDetached: number,
    private readonly coolDownMs = LOCAL_FIRST_COOL_DOWN_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** Why this config's first send should go to the queue now, if it should. */
  skipReason(configId: string): string | undefined {
    const c = this.cooling.get(configId);
    if (c && c.until > this.now()) return `config cooling down: ${c.why}`;
    if (c) this.cooling.delete(configId);
    if (this.detached.size >= this.maxDetached)
      return `${this.detached.size} first sends out past their budget in this worker`;
    return undefined;
  }

  /** The config's first sends use the queue for the cool-down. */
  coolDown(configId: string, why: string): void {
    this.cooling.delete(configId); // re-inserted last: the map's order is by recency
    this.cooling.set(configId, { until: this.now() + this.coolDownMs, why });
    if (this.cooling.size > MAX_COOLING) this.cooling.delete(this.cooling.keys().next().value!);
  }

  /**
   * A send of the config through the queue was answered with a success within the local
   * budget: its receiver is back, so its first sends are local again at once instead of at
   * the cool-down's end (an ordered key draining its backlog after an outage sent each event
   * through the queue, a child workflow apiece, for the rest of the minute).
   */
  recovered(configId: string): void {
    this.cooling.delete(configId);
  }

  /** Keeps track of a POST that outlived its activity, until it settles. */
  detach(sending: Promise<unknown>): void {
    const tracked = sending.then(
      () => undefined,
      () => undefined,
    );
    this.detached.add(tracked);
    void tracked.finally(() => this.detached.delete(tracked));
  }

  get detachedCount(): number {
    return this.detached.size;
  }

  /**
   * Waits for every detached POST (each ends within --send-timeout, and the writes of its row
   * within WRITE_AFTER_POST_MS after that): before the database closes.
   */
  async drain(): Promise<void> {
    await Promise.all([...this.detached]);
  }
}
