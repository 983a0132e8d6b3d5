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
// The SDK polls two queues, the sticky one (later tasks of workflows this worker has
// cached) and the normal one (first tasks, and tasks of workflows not cached here), and
// each poll holds a slot while it waits. Idle polls of one queue never hold every slot:
// deliveries that end in their first task (local sends) bring the sticky queue nothing,
// and deliveries waiting on a send's result bring the normal queue nothing, so the other
// queue's tasks would wait a whole long poll, or the server's 10 s sticky timeout. With
// two slots, a burst of 10 local sends took 10 to over 120 s before this rule.

import type {
  CustomSlotSupplier,
  SlotMarkUsedContext,
  SlotPermit,
  SlotReleaseContext,
  SlotReserveContext,
  WorkflowSlotInfo,
} from "@temporalio/worker";

/** The queue a poll waits on; an eager start's task has none. */
type Queue = "sticky" | "normal";

interface PollWaiter {
  queue: Queue;
  grant(): void;
}

interface Permit {
  id: number;
}

export class WorkflowTaskSlots implements CustomSlotSupplier<WorkflowSlotInfo> {
  readonly type = "custom";
  /** Permits handed out: to polls (waiting for a task or running it) and to eager tasks. */
  private reserved = 0;
  /** Permits held by polls still waiting for a task (by permit id; the SDK may copy permits), per queue. */
  private readonly idlePermits = new Map<number, Queue>();
  private readonly idle: Record<Queue, number> = { sticky: 0, normal: 0 };
  private lastPermit = 0;
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

  reserveSlot(ctx: SlotReserveContext, abort: AbortSignal): Promise<SlotPermit> {
    const queue: Queue = ctx.isSticky ? "sticky" : "normal";
    // Not the slot of a start let through: its eager task is about to ask for it.
    if (this.free() && this.mayPoll(queue)) return Promise.resolve(this.take(queue));
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        const i = this.polls.indexOf(waiter);
        if (i >= 0) this.polls.splice(i, 1);
        reject(abort.reason);
      };
      const waiter: PollWaiter = {
        queue,
        grant: () => {
          abort.removeEventListener("abort", onAbort);
          resolve(this.take(queue));
        },
      };
      abort.addEventListener("abort", onAbort, { once: true });
      this.polls.push(waiter);
    });
  }

  /** An eager start's slot (the one its start was let through for): never waits. */
  tryReserveSlot(_ctx: SlotReserveContext): SlotPermit | null {
    if (this.reserved >= this.max) return null;
    return this.take(undefined);
  }

  markSlotUsed(ctx: SlotMarkUsedContext<WorkflowSlotInfo>): void {
    this.stopIdling(ctx.permit as Permit);
    this.handOut(); // a poll of the same queue may now wait in its place
  }

  releaseSlot(ctx: SlotReleaseContext<WorkflowSlotInfo>): void {
    this.reserved--;
    this.stopIdling(ctx.permit as Permit); // a poll that never got a task
    this.handOut();
  }

  private take(idleOn: Queue | undefined): Permit {
    this.reserved++;
    const id = ++this.lastPermit;
    if (idleOn) {
      this.idlePermits.set(id, idleOn);
      this.idle[idleOn]++;
    }
    return { id };
  }

  private stopIdling(permit: Permit | undefined): void {
    const queue = permit && this.idlePermits.get(permit.id);
    if (!queue) return;
    this.idlePermits.delete(permit.id);
    this.idle[queue]--;
  }

  /** A poll may take a slot only if it leaves one that the other queue's polls could take. */
  private mayPoll(queue: Queue): boolean {
    return this.max < 2 || this.idle[queue] < this.max - 1;
  }

  /** A slot that neither a poll nor a task holds, nor a start let through is about to take. */
  private free(): boolean {
    return this.reserved + this.starting < this.max;
  }

  /** Free slots go to waiting polls first (the SDK runs a bounded number), then to starts. */
  private handOut(): void {
    while (this.free()) {
      const i = this.nextPoll();
      if (i < 0) break;
      this.polls.splice(i, 1)[0]!.grant();
    }
    while (this.free() && this.starts.length > 0) {
      this.starting++;
      this.starts.shift()!();
    }
  }

  /** The first waiting poll that a free slot may go to, if any. */
  private nextPoll(): number {
    return this.polls.findIndex((p) => this.mayPoll(p.queue));
  }

  /**
   * Resolves when a start may go ahead, in the order starts asked, or after `maxWaitMs`
   * (it then goes ahead anyway, eagerly only if the SDK finds a slot). Every call must be
   * followed by started() once the start came back.
   */
  whenFree(maxWaitMs: number): Promise<void> {
    if (this.free() && this.starts.length === 0 && this.nextPoll() < 0) {
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
