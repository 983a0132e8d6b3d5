import { type InjectedSinks, Worker, type WorkerOptions } from "@temporalio/worker";
import { createBatchActivities } from "../activities/batch-activities.js";
import { createDeliveryActivities } from "../activities/delivery-activities.js";
import { createMaintenanceActivities } from "../activities/maintenance-activities.js";
import { createOrderedBacklogActivities } from "../activities/ordered-backlog.js";
import { createOrderingActivities } from "../activities/ordering-activities.js";
import { createRecoveryActivities } from "../activities/recovery-activities.js";
import type { ProcessContext } from "../core/process-context.js";
import type { DeliverySinks } from "../workflows/delivery-sinks.js";
import { startDelivery } from "./start-delivery.js";
import { maintenanceQueue, sendQueue } from "./task-queues.js";
import type { WorkflowTaskSlots } from "./workflow-task-slots.js";

// The three workers of delivery, one per task queue (--task-queues): workflow tasks, HTTP
// sends and maintenance. delivery-worker.ts chooses which ones a process runs.

/** What every worker of the process shares: the connection, namespace, grace, plugins and version. */
export type WorkerBase = Pick<
  WorkerOptions,
  "connection" | "namespace" | "shutdownGraceTime" | "plugins" | "workerDeploymentOptions"
>;

/** The dependencies of the delivery, batch and ordering activities. */
export type ActivityDeps = Parameters<typeof createDeliveryActivities>[0] &
  Parameters<typeof createOrderingActivities>[0] &
  Parameters<typeof createOrderedBacklogActivities>[0] &
  Parameters<typeof createBatchActivities>[0] &
  Parameters<typeof createMaintenanceActivities>[0];

/**
 * Pollers scaled by the server's feedback instead of the fixed 10: a backlog
 * gets up to half the slots polling, an idle queue keeps two.
 */
const autoscalingPollers = (slots: number) =>
  ({ type: "autoscaling", minimum: 2, initial: 10, maximum: Math.max(10, Math.floor(slots / 2)) }) as const;

/**
 * Workflow-task polls per queue. The SDK runs the poller behaviour twice (the sticky and
 * the normal queue), and each of the two poll loops holds one slot more than its polls
 * while it waits to poll again: with this many, polls hold at most about half the slots,
 * and the other half is left to running tasks and to the eager first tasks of starts
 * (workflow-task-slots.ts).
 */
export const workflowPollsPerQueue = (slots: number) => Math.max(1, Math.floor(slots / 4) - 1);

export interface WorkflowWorkerParts {
  workflowBundle: WorkerOptions["workflowBundle"];
  sinks: InjectedSinks<DeliverySinks>;
  workflowSlots: WorkflowTaskSlots;
  pollsPerQueue: number;
}

/** `--task-queue`: delivery workflows, and the sends they run as local activities. */
export function createWorkflowWorker(
  ctx: ProcessContext,
  base: WorkerBase,
  deps: ActivityDeps,
  parts: WorkflowWorkerParts,
): Promise<Worker> {
  const { options } = ctx;
  const { workflowBundle, sinks, workflowSlots, pollsPerQueue } = parts;
  return Worker.create({
    ...base,
    taskQueue: options.taskQueue,
    workflowBundle,
    sinks,
    // For deliveries started with --send-mode local, whichever process they
    // land on; this queue never gets (remote) activity tasks.
    activities: {
      ...createDeliveryActivities(deps),
      ...createOrderingActivities(deps),
      ...createOrderedBacklogActivities(deps),
      // The batch collectors' local activity (handRowsToBatch).
      ...createBatchActivities(deps),
    },
    enableNonLocalActivities: false,
    tuner: {
      workflowTaskSlotSupplier: workflowSlots,
      localActivityTaskSlotSupplier: { type: "fixed-size", numSlots: options.maxConcurrentSends },
      // This worker runs no other kinds of task.
      activityTaskSlotSupplier: { type: "fixed-size", numSlots: 1 },
      nexusTaskSlotSupplier: { type: "fixed-size", numSlots: 1 },
    },
    ...(options.maxCachedWorkflows ? { maxCachedWorkflows: options.maxCachedWorkflows } : {}),
    workflowTaskPollerBehavior: {
      type: "autoscaling",
      minimum: Math.min(2, pollsPerQueue),
      initial: pollsPerQueue,
      maximum: pollsPerQueue,
    },
  });
}

/** `<task-queue>-sends`: HTTP sends (single and batched) as activity tasks. */
export function createSendsWorker(
  ctx: ProcessContext,
  base: WorkerBase,
  deps: ActivityDeps,
): Promise<Worker> {
  const { options } = ctx;
  return Worker.create({
    ...base,
    taskQueue: sendQueue(options.taskQueue),
    activities: { ...createDeliveryActivities(deps), ...createBatchActivities(deps) },
    maxConcurrentActivityTaskExecutions: options.maxConcurrentSends,
    activityTaskPollerBehavior: autoscalingPollers(options.maxConcurrentSends),
  });
}

/** `<task-queue>-maintenance`: the retention schedule's workflows and bulk recovery. */
export function createMaintenanceWorker(
  ctx: ProcessContext,
  base: WorkerBase,
  deps: ActivityDeps,
  workflowBundle: WorkerOptions["workflowBundle"],
): Promise<Worker> {
  const { options } = ctx;
  return Worker.create({
    ...base,
    taskQueue: maintenanceQueue(options.taskQueue),
    workflowBundle,
    activities: {
      ...createMaintenanceActivities(deps),
      ...createRecoveryActivities({
        ...deps,
        startReplay: (config, event, workflowId, replayOf) =>
          startDelivery(ctx, config, event, workflowId, replayOf),
        ratePerSecond: options.recoveryRate,
      }),
    },
  });
}
