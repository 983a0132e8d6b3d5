import type { PrismaClient } from "../common/db/database.js";
import type { ProcessContext } from "../core/process-context.js";
import { Prisma, type Recovery } from "../generated/prisma/client.js";
import { maintenanceQueue } from "../workers/task-queues.js";
import type { recoverDeliveries } from "../workflows/recovery.js";
import { ApiError, notFound, unavailable, validation } from "./errors.js";
import { TenantQuotas } from "./tenant-quotas.js";
import { check } from "./validation.js";

interface RecoveryRequest {
  since: string;
  until?: string;
  eventTypes?: string[];
}

export interface RecoveryStart {
  recovery: Recovery;
  /** False when this idempotency key had asked for the same recovery before. */
  created: boolean;
}

export interface Recoveries {
  start(configId: string, body: unknown, key: string | undefined): Promise<RecoveryStart>;
  get(configId: string, recoveryId: string): Promise<Recovery>;
  list(configId: string): Promise<Recovery[]>;
}

/** Recoveries listed per config, newest first. */
const LIST_LIMIT = 100;

function time(field: string, text: string): Date {
  const d = new Date(text);
  // ISO 8601 with a date and a time; Date also takes forms such as "2026" or "March 7".
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(text) || Number.isNaN(d.getTime()))
    throw validation(
      `${field} must be an RFC 3339 time such as 2026-11-25T10:00:00Z, got ${JSON.stringify(text)}`,
    );
  return d;
}

const sameRequest = (r: Recovery, since: Date, until: Date | undefined, types: string[]) =>
  r.since.getTime() === since.getTime() &&
  (until === undefined || r.until.getTime() === until.getTime()) &&
  r.eventTypes.join("\n") === types.join("\n");

/**
 * POST /configs/{id}/recover and its progress. The request is stored once per config
 * and idempotency key (a repeat answers the same recovery and starts nothing), then a
 * recoverDeliveries workflow on the maintenance queue does the work at --recovery-rate.
 */
export function createRecoveries(ctx: ProcessContext, prisma: PrismaClient): Recoveries {
  const quotas = new TenantQuotas(ctx.db.pool, ctx.options.quotas);
  const get = async (configId: string, recoveryId: string) => {
    const r = await prisma.recovery.findUnique({ where: { id: recoveryId } });
    if (!r || r.configId !== configId)
      throw notFound(`recovery ${recoveryId} of config ${configId} not found`);
    return r;
  };

  return {
    get,
    list: (configId) =>
      prisma.recovery.findMany({ where: { configId }, orderBy: { createdAt: "desc" }, take: LIST_LIMIT }),

    async start(configId, body, key) {
      if (!key) throw validation("the Idempotency-Key header is required to recover deliveries");
      if (key.length > 255) throw validation("Idempotency-Key must be at most 255 characters");
      const req = check<RecoveryRequest>("RecoveryRequest", body);
      const since = time("since", req.since);
      const until = req.until === undefined ? undefined : time("until", req.until);
      if (until && until <= since) throw validation("until must be later than since");
      const types = [...new Set((req.eventTypes ?? []).map((t) => t.trim().toLowerCase()))].sort();

      const config = await prisma.config.findUnique({ where: { id: configId } });
      if (!config) throw notFound(`config ${configId} not found`);
      const existing = await prisma.recovery.findUnique({
        where: { configId_idempotencyKey: { configId, idempotencyKey: key } },
      });
      if (existing) {
        if (!sameRequest(existing, since, until, types))
          throw new ApiError(
            409,
            "CONFLICT",
            `Idempotency-Key ${JSON.stringify(key)} was used for recovery ${existing.id} of this config with another window or event types`,
          );
        return { recovery: existing, created: false };
      }
      if (!config.active)
        throw new ApiError(
          409,
          "CONFLICT",
          `config ${configId} is inactive; activate it to recover its deliveries`,
        );
      // After the repeat check: asking again for a recovery already made is never refused.
      await quotas.recovery(config.tenantId);

      const id = crypto.randomUUID();
      let recovery: Recovery;
      try {
        recovery = await prisma.recovery.create({
          data: {
            id,
            configId,
            idempotencyKey: key,
            since,
            // The window ends at the request when open: later failures are not this recovery's.
            until: until ?? new Date(),
            eventTypes: types,
            workflowId: `recovery:${id}`,
          },
        });
      } catch (err) {
        // The same key at the same moment from another request: answer that recovery.
        if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === "P2002")
          return this.start(configId, body, key);
        throw err;
      }
      try {
        await ctx.temporal.workflow.start<typeof recoverDeliveries>("recoverDeliveries", {
          taskQueue: maintenanceQueue(ctx.options.taskQueue),
          workflowId: recovery.workflowId,
          args: [{ recoveryId: id }],
        });
      } catch (err) {
        const message = `the recovery workflow could not start: ${(err as Error).message}`;
        await prisma.recovery.update({
          where: { id },
          data: { state: "failed", lastError: message, finishedAt: new Date() },
        });
        throw unavailable(`${message}; repeat the request with another Idempotency-Key`);
      }
      return { recovery, created: true };
    },
  };
}

export function recoveryJson(r: Recovery) {
  return {
    id: r.id,
    configID: r.configId,
    since: r.since.toISOString(),
    until: r.until.toISOString(),
    eventTypes: r.eventTypes,
    state: r.state,
    matched: r.matched,
    started: r.started,
    alreadyStarted: r.alreadyStarted,
    failedToStart: r.failedToStart,
    ...(r.lastError !== null ? { lastError: r.lastError } : {}),
    workflowID: r.workflowId,
    createdAt: r.createdAt.toISOString(),
    updatedAt: r.updatedAt.toISOString(),
    ...(r.finishedAt !== null ? { finishedAt: r.finishedAt.toISOString() } : {}),
  };
}
