import { proxyActivities } from "@temporalio/workflow";
import type { MaintenanceActivities, RetentionInput } from "../activities/maintenance-activities.js";

const { purgeFinishedAttempts } = proxyActivities<MaintenanceActivities>({
  startToCloseTimeout: "10 minutes",
  retry: { initialInterval: "5 seconds", maximumInterval: "1 minute", maximumAttempts: 5 },
});

/** Run by the retention schedule every --retention-period. */
export async function attemptsRetention(input: RetentionInput) {
  return purgeFinishedAttempts(input);
}
