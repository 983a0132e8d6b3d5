// The workflow-task slots of this process's delivery worker, counted here rather than
// inside the SDK so that starts can see them. A start waits (bounded) until a slot is
// free, and the SDK's eager start then takes that slot: the server hands the new
// workflow's first task back with the start's answer. Without the wait, a burst of
// events starts workflows far faster than the worker runs them: their first tasks queue
// up in the server's matching, the pollers take every slot that frees up, and eager
// starts find none; the server then stores and dispatches every task itself (measured in
// bench/delivery: the no-op floor of the same shape does 30 % fewer workflows per second
// started as an 800-workflow burst than started as they finish).
// Polls come first: they bring the later tasks of workflows already running (a send's
// result, a retry timer), so a freed slot goes to a waiting poll before a waiting start,
// and starts use only the slots that no poll holds.

import type {
  CustomSlotSupplier,
  SlotMarkUsedContext,
  SlotPermit,
  SlotReleaseContext,
  SlotReserveContext,
  WorkflowSlotInfo,
} from "@temporalio/worker";

interface PollWaiter {
  grant(): void;
}

export class WorkflowTaskSlots implements CustomSlotSupplier<WorkflowSlotInfo> {
  readonly type = "custom";
  /** Permits handed out: to polls (waiting for a task or running it) and to eager tasks. */
  private reserved = 0;
  /** Starts let through whose start has not come back yet. */
  private starting = 0;
  private readonly polls: PollWaiter[] = [];
  private readonly starts: (() => void)[] = [];

  constructor(readonly max: number) {}

  /** Slots held now, by polls and tasks. */
  get held(): number {
    return this.reserved;
  }

  /** Starts waiting for a slot. */
  get waitingStarts(): number {
    return this.starts.length;
  }

  reserveSlot(_ctx: SlotReserveContext, abort: AbortSignal): Promise<SlotPermit> {
    // Not the slot of a start let through: its eager task is about to ask for it.
    if (this.free()) {
      this.reserved++;
      return Promise.resolve({});
    }
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        const i = this.polls.indexOf(waiter);
        if (i >= 0) this.polls.splice(i, 1);
        reject(abort.reason);
      };
      const waiter: PollWaiter = {
        grant: () => {
          abort.removeEventListener("abort", onAbort);
          this.reserved++;
          resolve({});
        },
      };
      abort.addEventListener("abort", onAbort, { once: true });
      this.polls.push(waiter);
    });
  }

  /** An eager start's slot (the one its start was let through for): never waits. */
  tryReserveSlot(_ctx: SlotReserveContext): SlotPermit | null {
    if (this.reserved >= this.max) return null;
    this.reserved++;
    return {};
  }

  markSlotUsed(_ctx: SlotMarkUsedContext<WorkflowSlotInfo>): void {}

  releaseSlot(_ctx: SlotReleaseContext<WorkflowSlotInfo>): void {
    this.reserved--;
    this.handOut();
  }

  /** A slot that neither a poll nor a task holds, nor a start let through is about to take. */
  private free(): boolean {
    return this.reserved + this.starting < this.max;
  }

  /** Free slots go to waiting polls first (the SDK runs a bounded number), then to starts. */
  private handOut(): void {
    while (this.free() && this.polls.length > 0) this.polls.shift()!.grant();
    while (this.free() && this.starts.length > 0) {
      this.starting++;
      this.starts.shift()!();
    }
  }

  /**
   * Resolves when a start may go ahead, in the order starts asked, or after `maxWaitMs`
   * (it then goes ahead anyway, eagerly only if the SDK finds a slot). Every call must be
   * followed by started() once the start came back.
   */
  whenFree(maxWaitMs: number): Promise<void> {
    if (this.free() && this.starts.length === 0 && this.polls.length === 0) {
      this.starting++;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        const i = this.starts.indexOf(wake);
        if (i >= 0) this.starts.splice(i, 1);
        this.starting++;
        resolve();
      }, maxWaitMs);
      this.starts.push(wake);
    });
  }

  /** A start came back: its eager task, if any, holds its slot from now on. */
  started(): void {
    this.starting--;
    this.handOut();
  }
}
