import { createHash } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { Client } from "@temporalio/client";
import { SessionLock } from "../common/db/session-lock.js";
import type { Logger } from "../common/logger.js";
import { type TaskQueueStats, taskQueueStatsMetrics } from "../core/metrics.js";
import type { ProcessContext } from "../core/process-context.js";
import { maintenanceQueue, sendQueue } from "./task-queues.js";

// The backlog Temporal reports for each task queue of the service (DescribeTaskQueue with
// report_stats), read every --task-queue-stats-interval by one worker process at a time:
// the one holding a PostgreSQL advisory lock. One reader keeps the load on Temporal (each
// read fans out to every partition of the queue) the same however many workers run, and
// gives one series per queue, so scaling rules need no de-duplication.

type WorkflowService = Client["workflowService"];
type DescribeRequest = Parameters<WorkflowService["describeTaskQueue"]>[0];
type DescribeResponse = Awaited<ReturnType<WorkflowService["describeTaskQueue"]>>;
export type DescribeTaskQueue = (request: DescribeRequest) => Promise<DescribeResponse>;

/** temporal.api.enums.v1 values: TaskQueueType, TaskQueueKind NORMAL, DescribeTaskQueueMode ENHANCED. */
const TASK_TYPES = { workflow: 1, activity: 2 } as const;
const KIND_NORMAL = 1;
const MODE_ENHANCED = 1;
/** gRPC status of a method the server does not have. */
const UNIMPLEMENTED = 12;
/** One read waits this long at most: a hung call must not hold the loop (nor the lock session) for long. */
const DESCRIBE_TIMEOUT_MS = 5_000;
/** A server that reports no stats is asked again this rarely (an upgrade brings them). */
const UNSUPPORTED_RECHECK_MS = 10 * 60_000;

export interface ServiceQueue {
  name: string;
  type: keyof typeof TASK_TYPES;
}

/** The task queues the service's workers poll, with the kind of task each one holds. */
export const serviceQueues = (taskQueue: string): ServiceQueue[] => [
  { name: taskQueue, type: "workflow" },
  { name: sendQueue(taskQueue), type: "activity" },
  { name: maintenanceQueue(taskQueue), type: "workflow" },
  { name: maintenanceQueue(taskQueue), type: "activity" },
];

/** How a server answers with stats: the default mode (server 1.28 and later) or the deprecated ENHANCED one (1.25 to 1.27). */
export type StatsMode = "default" | "enhanced";

/** One queue's stats as the server reports them in `mode`; null when it reports none. */
export async function readQueueStats(
  describe: DescribeTaskQueue,
  namespace: string,
  queue: ServiceQueue,
  mode: StatsMode,
): Promise<TaskQueueStats | null> {
  const taskQueue = { name: queue.name, kind: KIND_NORMAL };
  const type = TASK_TYPES[queue.type];
  if (mode === "default") {
    const answer = await describe({ namespace, taskQueue, taskQueueType: type, reportStats: true });
    return answer.stats ? statsOf(answer.stats) : null;
  }
  const answer = await describe({
    namespace,
    taskQueue,
    apiMode: MODE_ENHANCED,
    taskQueueTypes: [type],
    reportStats: true,
  });
  const stats = answer.versionsInfo?.[""]?.typesInfo?.[type]?.stats;
  return stats ? statsOf(stats) : null;
}

type RawStats = NonNullable<DescribeResponse["stats"]>;

/** int64 fields arrive as protobufjs Longs (or strings): numbers are plenty for counts and seconds. */
const num = (v: unknown): number => {
  if (v === null || v === undefined) return 0;
  if (typeof v === "object" && "toNumber" in v) return (v as { toNumber(): number }).toNumber();
  return Number(v);
};

const statsOf = (s: RawStats): TaskQueueStats => ({
  backlog: num(s.approximateBacklogCount),
  backlogAgeSeconds: num(s.approximateBacklogAge?.seconds) + num(s.approximateBacklogAge?.nanos) / 1e9,
  addRate: s.tasksAddRate ?? 0,
  dispatchRate: s.tasksDispatchRate ?? 0,
});

/** The key every process of one deployment (namespace and task queue) takes, in any database. */
const lockKey = (namespace: string, taskQueue: string): [number, number] => {
  const hash = (text: string) => createHash("sha256").update(text).digest().readInt32BE(0);
  return [hash("webhooks task queue stats"), hash(`${namespace}\0${taskQueue}`)];
};

/** Reads the service's task queues' stats until stopped, while this process holds the lock. */
export function startTaskQueueStats(
  ctx: ProcessContext,
  intervalMs: number,
  describe: DescribeTaskQueue = (r) =>
    ctx.temporal.connection.withDeadline(Date.now() + DESCRIBE_TIMEOUT_MS, () =>
      ctx.temporal.workflowService.describeTaskQueue(r),
    ),
): { stop(): Promise<void> } {
  const { options, logger, db } = ctx;
  const { namespace } = options.temporal;
  const lock = db.embedded
    ? undefined
    : new SessionLock({
        connString: db.url,
        key: lockKey(namespace, options.taskQueue),
        name: "webhooks-task-queue-stats",
        silentMs: Math.max(15_000, 3 * intervalMs),
      });
  const sampler = new Sampler(describe, namespace, serviceQueues(options.taskQueue), logger, lock);
  const wake = new AbortController();
  const loop = (async () => {
    while (!wake.signal.aborted) {
      await sampler.tick();
      await sleep(intervalMs, undefined, { signal: wake.signal }).catch(() => {});
    }
  })();
  return {
    async stop() {
      wake.abort();
      await loop;
      await lock?.close();
      taskQueueStatsMetrics.sampling(false);
    },
  };
}

/** One process's part: take the lock when free, and while held read every queue each tick. */
export class Sampler {
  private sampling = false;
  private mode: StatsMode = "default";
  private unsupportedUntil = 0;
  private lockError: string | undefined;
  private readonly queueErrors = new Map<string, string>();

  constructor(
    private readonly describe: DescribeTaskQueue,
    private readonly namespace: string,
    private readonly queues: ServiceQueue[],
    private readonly logger: Logger,
    /** Absent: the embedded database, which one process alone uses. */
    private readonly lock?: SessionLock,
  ) {}

  async tick(): Promise<void> {
    if (!(await this.holdsLock()) || Date.now() < this.unsupportedUntil) return;
    for (const q of this.queues) {
      const key = `${q.name}/${q.type}`;
      try {
        const stats = await this.read(q);
        if (!stats) return this.unsupported();
        taskQueueStatsMetrics.sampled(q.name, q.type, stats, Date.now());
        this.queueErrors.delete(key);
      } catch (err) {
        if ((err as { code?: number }).code === UNIMPLEMENTED) return this.unsupported();
        taskQueueStatsMetrics.unknown(q.name, q.type);
        const message = (err as Error).message;
        if (this.queueErrors.get(key) !== message)
          this.logger.warn(
            { err: message, taskQueue: q.name, taskType: q.type },
            "cannot read task queue stats",
          );
        this.queueErrors.set(key, message);
      }
    }
  }

  /** In the mode the server answered in last; a default-mode answer without stats tries ENHANCED once. */
  private async read(q: ServiceQueue): Promise<TaskQueueStats | null> {
    const stats = await readQueueStats(this.describe, this.namespace, q, this.mode);
    if (stats || this.mode === "enhanced") return stats;
    const enhanced = await readQueueStats(this.describe, this.namespace, q, "enhanced");
    if (enhanced) {
      this.mode = "enhanced";
      this.logger.info(
        "the Temporal server reports task queue stats in the ENHANCED mode only (server 1.25 to 1.27)",
      );
    }
    return enhanced;
  }

  /** Logged once; asked again every UNSUPPORTED_RECHECK_MS, with no series meanwhile. */
  private unsupported(): void {
    if (this.unsupportedUntil === 0)
      this.logger.warn(
        { recheckMinutes: UNSUPPORTED_RECHECK_MS / 60_000 },
        "the Temporal server reports no task queue stats (DescribeTaskQueue report_stats: server 1.25 or later): no backlog gauges on /metrics; the SDK's schedule-to-start latencies still say when to scale",
      );
    this.unsupportedUntil = Date.now() + UNSUPPORTED_RECHECK_MS;
    this.mode = "default";
    for (const q of this.queues) taskQueueStatsMetrics.unknown(q.name, q.type);
  }

  private async holdsLock(): Promise<boolean> {
    let held = true;
    if (this.lock) {
      try {
        held = await this.lock.hold();
        this.lockError = undefined;
      } catch (err) {
        held = false;
        const message = (err as Error).message;
        if (message !== this.lockError)
          this.logger.warn(
            { err: message },
            "cannot take the task queue stats lock in PostgreSQL: not reading",
          );
        this.lockError = message;
      }
    }
    if (held !== this.sampling) {
      this.sampling = held;
      taskQueueStatsMetrics.sampling(held);
      if (held)
        this.logger.info({ queues: this.queues.length }, "reading the task queues' stats for /metrics");
      else if (!this.lockError) this.logger.info("another process reads the task queues' stats");
    }
    return held;
  }
}
