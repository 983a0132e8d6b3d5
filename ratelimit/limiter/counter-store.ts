// What a counter backend (Redis, memcached, in-process memory) provides to the
// fixed-window limiter.

export interface CounterOp {
  key: string;
  /** Amount to add (0 reads the counter without changing it). */
  addend: number;
  /** Expiry to (re)set on the key, in seconds. */
  expireSeconds: number;
  /** True for SECOND windows, which go to the per-second store when one is configured. */
  perSecond: boolean;
}

export interface CounterStore {
  /** Adds each addend and refreshes the expiry; returns each counter's value after the addition. */
  increment(ops: CounterOp[]): Promise<number[]>;
  /**
   * Runs `fn`; the increments it starts synchronously may share one connection and one
   * write, each still with its own result and its own failure. Optional: a store
   * without it runs `fn` as it is.
   */
  together?(fn: () => void): void;
  /** Current values, 0 for missing keys. */
  get(keys: { key: string; perSecond: boolean }[]): Promise<number[]>;
  /** False while no connection to the store is usable (for the health check). */
  connected(): boolean;
  close(): Promise<void>;
}

/** A failure of the counter store; the decision call fails with its message. */
export class CacheError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CacheError";
  }
}

/** A cache key the backend cannot store (memcached's length and character rules): the request's fault. */
export class CacheKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CacheKeyError";
  }
}
