import { proxyActivities } from "@temporalio/workflow";
import type { MaintenanceActivities, RetentionInput } from "../activities/maintenance-activities.js";

const { purgeFinishedAttempts, closeOrphanedAttempts, recoverStaleAttempts } =
  proxyActivities<MaintenanceActivities>({
    startToCloseTimeout: "10 minutes",
    retry: { initialInterval: "5 seconds", maximumInterval: "1 minute", maximumAttempts: 5 },
  });

/** Run by the retention schedule every --retention-period. */
export async function attemptsRetention(input: RetentionInput) {
  const closed = await closeOrphanedAttempts();
  const purged = await purgeFinishedAttempts(input);
  return { closed, ...purged };
}

/** Run by the stale-recovery schedule every minute. */
export async function staleAttemptsRecovery() {
  return { recovered: await recoverStaleAttempts() };
}
