import { formatDuration } from "../common/duration.js";
import type { BrokerPublisher } from "../core/broker/types.js";
import { configsAutoDeactivated } from "../core/metrics.js";
import type { ProcessContext } from "../core/process-context.js";
import { closeConfigDeliveries } from "./close-deliveries.js";
import { configsFailingSince } from "./endpoint-health.js";

/** The audit event of an automatic deactivation, in the platform's event message format. */
export function deactivationEvent(
  c: { id: string; endpoint: string },
  reason: string,
  since: Date,
  at: Date,
) {
  return {
    idempotency_key: `config-deactivated:${c.id}:${at.getTime()}`,
    date: at.toISOString(),
    app: "webhooks",
    version: "v1",
    type: "CONFIG_DEACTIVATED",
    payload: {
      configID: c.id,
      endpoint: c.endpoint,
      reason,
      failingSince: since.toISOString(),
      deactivatedAt: at.toISOString(),
      automatic: true,
    },
  };
}

/**
 * --auto-deactivate-after: a config whose sends have all failed for that long (no 2xx
 * since, nor since its last activation) is deactivated as PUT /configs/{id}/deactivate
 * would (its queued deliveries close), with the reason in the config and an event on
 * the audit topic. Runs in the processes polling the maintenance queue; several are
 * safe (only the one whose UPDATE flips the config publishes). `activate` resets it.
 */
export function startAutoDeactivation(
  ctx: ProcessContext,
  afterMs: number,
  audit: { publisher: BrokerPublisher; topic: string } | undefined,
): { stop(): Promise<void> } {
  const { logger } = ctx;
  const prisma = ctx.db.prisma;
  const everyMs = Math.min(30_000, Math.max(1000, afterMs / 4));

  const check = async () => {
    const now = new Date();
    for (const c of await configsFailingSince(prisma, new Date(now.getTime() - afterMs))) {
      const reason = `every send failed since ${c.since.toISOString()}, longer than --auto-deactivate-after ${formatDuration(afterMs)}`;
      const flipped = await prisma.config.updateMany({
        // Not if it was activated again after the streak began (a reset since the query).
        where: { id: c.id, active: true, OR: [{ activatedAt: null }, { activatedAt: { lt: c.since } }] },
        data: { active: false, deactivatedReason: reason, deactivatedAt: now, updatedAt: now },
      });
      if (flipped.count === 0) continue;
      configsAutoDeactivated.inc();
      logger.warn(
        { configId: c.id, endpoint: c.endpoint, failingSince: c.since },
        "config deactivated automatically",
      );
      await closeConfigDeliveries(ctx.temporal, prisma, logger, c.id, "config deactivated");
      if (audit)
        await audit.publisher
          .publish(audit.topic, deactivationEvent(c, reason, c.since, now))
          .catch((err: Error) =>
            logger.error({ err: err.message, topic: audit.topic }, "audit event not published"),
          );
    }
  };

  let running = Promise.resolve();
  const timer = setInterval(() => {
    running = running.then(check).catch((err: Error) => {
      // The database or Temporal away: the next tick tries again.
      logger.warn({ err: err.message }, "automatic deactivation check failed");
    });
  }, everyMs);
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
