import type { BrokerPublisher } from "../core/broker/types.js";
import { openPublisher } from "../core/open-broker.js";
import type { ProcessContext } from "../core/process-context.js";
import { sealPlainSecrets } from "../core/secret-resealing.js";
import { startAutoDeactivation } from "./auto-deactivation.js";
import { ensureMaintenanceSchedules, restoreMaintenanceSchedules } from "./maintenance-schedules.js";
import { startReconciler } from "./reconciliation.js";

/** How often the reconciling process checks that Temporal still has the retention schedule. */
const SCHEDULE_CHECK_MS = 60_000;

/**
 * The loops of the process that polls the maintenance queue: the retention schedule (ensured
 * now, restored should it vanish), reconciliation (with the sealing of plain secrets), and
 * automatic deactivation when --auto-deactivate-after is set. Each stops with the process.
 */
export async function startMaintenanceLoops(ctx: ProcessContext): Promise<void> {
  const { options, logger } = ctx;
  await ensureMaintenanceSchedules(ctx);
  let lastCheck = Date.now();
  const reconciler = startReconciler(ctx, async () => {
    // Plain secrets another writer stored (plain SQL, the entity server): a look at an empty index.
    await sealPlainSecrets(ctx.db.pool, ctx.secrets, logger);
    if (Date.now() - lastCheck < SCHEDULE_CHECK_MS) return;
    lastCheck = Date.now();
    await restoreMaintenanceSchedules(ctx);
  });
  ctx.shutdown.add("reconciliation", () => reconciler.stop());
  if (options.autoDeactivateAfter > 0) {
    let audit: { publisher: BrokerPublisher; topic: string } | undefined;
    if (options.auditTopic) {
      const publisher = await openPublisher(options, logger);
      ctx.shutdown.add("deactivation audit publisher", () => publisher.close());
      audit = { publisher, topic: options.auditTopic };
    }
    const deactivation = startAutoDeactivation(ctx, options.autoDeactivateAfter, audit);
    ctx.shutdown.add("automatic deactivation", () => deactivation.stop());
  }
}
