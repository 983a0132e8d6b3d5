import { formatDuration } from "../../common/duration.js";
import type { Logger } from "../../common/logger.js";

/**
 * Tells whether a consumer is stuck: messages wait for it and it settled none
 * (acknowledged, dead-lettered) for `stuckAfterMs`. Looked at periodically so
 * that a health probe answers from the latest look; a consumer that is merely
 * waiting to retry a few messages while nothing else waits is not stuck.
 */
export class StallMonitor {
  private lastProgress = Date.now();
  private waitingSince?: number;
  private stuck?: string;
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly what: string,
    private readonly stuckAfterMs: number,
    /** Messages the broker holds for the consumer that it has not taken yet. */
    private readonly waiting: () => Promise<number>,
    private readonly logger: Logger,
  ) {}

  start(): void {
    if (this.stuckAfterMs <= 0) return;
    this.timer = setInterval(() => void this.look(), Math.min(Math.max(this.stuckAfterMs / 4, 250), 10_000));
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** A message was settled. */
  progress(): void {
    this.lastProgress = Date.now();
  }

  /** Throws naming the stall when the last look found the consumer stuck. */
  check(): void {
    if (this.stuck) throw new Error(this.stuck);
  }

  private async look(): Promise<void> {
    let waiting: number;
    try {
      waiting = await this.waiting();
    } catch {
      return; // the broker's reachability is checked on its own
    }
    const now = Date.now();
    if (waiting === 0) {
      this.waitingSince = undefined;
      this.stuck = undefined;
      return;
    }
    this.waitingSince ??= now;
    const idleMs = now - Math.max(this.lastProgress, this.waitingSince);
    const wasStuck = this.stuck !== undefined;
    this.stuck =
      idleMs >= this.stuckAfterMs
        ? `${this.what} is stuck: ${waiting} messages waiting and none settled for ${formatDuration(Math.round((now - this.lastProgress) / 1000) * 1000)}`
        : undefined;
    if (this.stuck && !wasStuck) this.logger.warn({ consumer: this.what, waiting }, this.stuck);
    if (!this.stuck && wasStuck) this.logger.info({ consumer: this.what }, "consumer moving again");
  }
}
