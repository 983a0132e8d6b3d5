import { type Client, ScheduleAlreadyRunning, type ScheduleOptions } from "@temporalio/client";
import { STALE_RETRYING_MS } from "../activities/maintenance-activities.js";
import { attemptsRetention, staleAttemptsRecovery } from "../workflows/maintenance.js";
import type { Runtime } from "./runtime.js";

export const maintenanceQueue = (taskQueue: string) => `${taskQueue}-maintenance`;
export const retentionScheduleId = (taskQueue: string) => `${taskQueue}-attempts-retention`;
export const staleRecoveryScheduleId = (taskQueue: string) => `${taskQueue}-stale-recovery`;

/** The stale check runs at most once a minute (the spec's rate). */
const STALE_CHECK_EVERY_MS = 60_000;

/**
 * Creates, or updates to the current flags, the Temporal Schedules of the
 * attempts table's maintenance: retention every --retention-period and stale
 * recovery every minute. Overlapping runs are skipped, so many workers can call
 * this at start.
 */
export async function ensureMaintenanceSchedules(rt: Runtime): Promise<void> {
  const { settings, temporal, logger } = rt;
  const taskQueue = maintenanceQueue(settings.taskQueue);
  const schedules: ScheduleOptions[] = [
    {
      scheduleId: retentionScheduleId(settings.taskQueue),
      spec: { intervals: [{ every: settings.retentionPeriod }] },
      action: {
        type: "startWorkflow",
        workflowType: attemptsRetention,
        args: [
          { successDelayMs: settings.retentionSuccessDelay, failedDelayMs: settings.retentionFailedDelay },
        ],
        taskQueue,
      },
      policies: { overlap: "SKIP", catchupWindow: "1 minute" },
      state: {
        note: "purges old attempts and closes orphaned ones (webhooks --retention-* flags)",
        triggerImmediately: true,
      },
    },
    {
      scheduleId: staleRecoveryScheduleId(settings.taskQueue),
      spec: { intervals: [{ every: STALE_CHECK_EVERY_MS }] },
      action: { type: "startWorkflow", workflowType: staleAttemptsRecovery, args: [], taskQueue },
      policies: { overlap: "SKIP", catchupWindow: "1 minute" },
      state: {
        note: `puts attempts left 'retrying' over ${STALE_RETRYING_MS / 60_000} min back to 'to retry'`,
      },
    },
  ];
  for (const options of schedules) await upsertSchedule(temporal, options);
  logger.info({ schedules: schedules.map((s) => s.scheduleId), taskQueue }, "maintenance schedules in place");
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
