import { ActivityFailure, ApplicationFailure, continueAsNew, proxyActivities } from "@temporalio/workflow";
import type { RecoveryActivities } from "../activities/recovery-activities.js";

const { recoverPage } = proxyActivities<RecoveryActivities>({
  startToCloseTimeout: "15 minutes",
  heartbeatTimeout: "1 minute",
  // Database or Temporal unavailable: tried again, a bounded number of times.
  retry: { initialInterval: "2 seconds", maximumInterval: "1 minute", maximumAttempts: 10 },
});
const { finishRecovery } = proxyActivities<RecoveryActivities>({
  startToCloseTimeout: "1 minute",
  retry: { initialInterval: "2 seconds", maximumInterval: "1 minute", maximumAttempts: 20 },
});

/** Pages per run before the history is cut with continue-as-new. */
const PAGES_PER_RUN = 50;

export interface RecoverDeliveriesInput {
  recoveryId: string;
  /** Where the walk goes on (continue-as-new); from the first webhook id when absent. */
  cursor?: string;
}

/** Below every UUID. */
const FIRST = "00000000-0000-0000-0000-000000000000";

/**
 * A bulk recovery (POST /configs/{id}/recover): walks the config's failed deliveries
 * page by page, each page replayed by an activity at the recovery rate, then records
 * the end. Durable: a worker or API crash resumes from the last page.
 */
export async function recoverDeliveries(input: RecoverDeliveriesInput): Promise<void> {
  let cursor = input.cursor ?? FIRST;
  try {
    for (let page = 0; page < PAGES_PER_RUN; page++) {
      const result = await recoverPage({ recoveryId: input.recoveryId, cursor });
      if (result.done) {
        await finishRecovery({ recoveryId: input.recoveryId });
        return;
      }
      cursor = result.cursor;
    }
  } catch (err) {
    const cause = err instanceof ActivityFailure && err.cause instanceof ApplicationFailure ? err.cause : err;
    await finishRecovery({ recoveryId: input.recoveryId, error: (cause as Error).message });
    return;
  }
  await continueAsNew<typeof recoverDeliveries>({ recoveryId: input.recoveryId, cursor });
}
