import {
  type Client,
  ScheduleAlreadyRunning,
  ScheduleNotFoundError,
  type ScheduleOptions,
} from "@temporalio/client";
import type { ProcessContext } from "../core/process-context.js";
import { attemptsRetention } from "../workflows/maintenance.js";
import { maintenanceQueue } from "./task-queues.js";

export const retentionScheduleId = (taskQueue: string) => `${taskQueue}-attempts-retention`;
/**
 * The schedule of the stale recovery (docs/spec-rules.md#stale-recovery), which reconciliation
 * replaced; deleted where found.
 */
const legacyStaleRecoveryScheduleId = (taskQueue: string) => `${taskQueue}-stale-recovery`;

function retentionSchedule(ctx: ProcessContext): ScheduleOptions {
  const { options } = ctx;
  return {
    scheduleId: retentionScheduleId(options.taskQueue),
    spec: { intervals: [{ every: options.retentionPeriod }] },
    action: {
      type: "startWorkflow",
      workflowType: attemptsRetention,
      args: [
        {
          successDelayMs: options.retentionSuccessDelay,
          failedDelayMs: options.retentionFailedDelay,
          deadLetterDelayMs: options.retentionDeadLetterDelay,
        },
      ],
      taskQueue: maintenanceQueue(options.taskQueue),
    },
    policies: { overlap: "SKIP", catchupWindow: "1 minute" },
    state: { note: "purges old attempts (webhooks --retention-* flags)", triggerImmediately: true },
  };
}

/**
 * Creates, or updates to the current flags, the Temporal Schedule of the
 * attempts table's retention (every --retention-period). Overlapping runs are
 * skipped, so many workers can call this at start.
 */
export async function ensureMaintenanceSchedules(ctx: ProcessContext): Promise<void> {
  const { options, temporal, logger } = ctx;
  const schedule = retentionSchedule(ctx);
  await upsertSchedule(temporal, schedule);
  try {
    await temporal.schedule.getHandle(legacyStaleRecoveryScheduleId(options.taskQueue)).delete();
    logger.info("stale-recovery schedule deleted: reconciliation replaces it");
  } catch (err) {
    if (!(err instanceof ScheduleNotFoundError)) throw err;
  }
  logger.info({ schedule: schedule.scheduleId }, "maintenance schedule in place");
}

/** Creates the schedule again when Temporal lost it (its state was reset); cheap when it exists. */
export async function restoreMaintenanceSchedules(ctx: ProcessContext): Promise<void> {
  try {
    await ctx.temporal.schedule.getHandle(retentionScheduleId(ctx.options.taskQueue)).describe();
  } catch (err) {
    if (!(err instanceof ScheduleNotFoundError)) throw err;
    ctx.logger.warn("the retention schedule is gone from Temporal: creating it again");
    await ensureMaintenanceSchedules(ctx);
  }
}

async function upsertSchedule(temporal: Client, options: ScheduleOptions): Promise<void> {
  try {
    await temporal.schedule.create(options);
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    await temporal.schedule.getHandle(options.scheduleId).update((previous) => ({
      ...previous,
      spec: options.spec,
      action: options.action,
      policies: { ...previous.policies, ...options.policies },
    }));
  }
}
