import { explainDatabaseTimeout } from "../common/db/timeouts.js";
import { applyFilters } from "../core/config-filters.js";
import { findActiveConfigs, findTenantConfigs } from "../core/config-rows.js";
import type { EventMessage } from "../core/event-message.js";
import { deliveryKey } from "../core/event-message.js";
import { checkEventSchema } from "../core/event-schema-check.js";
import { subscriptionsMatching } from "../core/event-types.js";
import type { ProcessContext } from "../core/process-context.js";
import {
  describeFailure,
  type FailureSource,
  PermanentStartFailure,
  permanentFailureOf,
} from "../core/start-failures.js";
import { checkEventBounds, keyword } from "../core/start-limits.js";
import { type DeliveryEvent, storeEvent } from "../core/stored-events.js";
import { DEFAULT_TENANT_ID, findTenant } from "../core/tenant-rows.js";
import type { Config } from "../generated/prisma/client.js";
import { enterLane, type Lane, type Redelivered } from "./ordered-lanes.js";
import { deliveryWorkflowId, startDelivery } from "./start-delivery.js";

export interface DeliveryStarted {
  configId: string;
  webhookId: string;
  workflowId: string;
  /** False when the delivery had started before (a redelivery or a replay starts nothing new). */
  started: boolean;
  eager: boolean;
}

export interface StartFailure {
  /** The config whose start failed; absent when the whole event failed (its configs could not be read, it is over a bound). */
  configId?: string;
  reason: string;
  /** Null for a failure that may pass when tried again. */
  permanent: FailureSource | null;
}

export interface EventStarts {
  /** Active configs the event matched: its type, and their payload filter when they have one. */
  configs: number;
  /** Active configs whose types matched but whose payload filter the event did not pass: nothing starts for them. */
  filtered: number;
  /** Of `filtered`, those whose filter was stopped by the step budget (core/filter-budget.ts). */
  overBudget: number;
  started: DeliveryStarted[];
  failures: StartFailure[];
  /** The tenant whose configs the event matched, once its name resolved (dead letters record it). */
  tenantId?: string;
}

/**
 * The active configs an event matches: the named tenant's (by id or uid), else the
 * default tenant's. A tenant that does not exist refuses the event: it is never
 * delivered to another tenant's configs.
 */
async function matchingConfigs(
  ctx: ProcessContext,
  event: EventMessage,
): Promise<{ tenantId: string; configs: Config[] }> {
  const subscriptions = subscriptionsMatching(event.type);
  if (event.tenant === undefined) {
    return { tenantId: DEFAULT_TENANT_ID, configs: await findActiveConfigs(ctx.db.pool, subscriptions) };
  }
  const found = await findTenantConfigs(ctx.db.pool, subscriptions, event.tenant);
  if (!found) {
    throw new PermanentStartFailure(
      `tenant ${JSON.stringify(event.tenant.slice(0, 200))} does not exist: the event names no tenant's id or uid`,
      "event",
    );
  }
  return found;
}

/**
 * Starts the deliveries of one event: to `configs`, or to every active config
 * whose event types match, in both cases only those whose payload filter the
 * event passes (a filter that fails is that config's failure). The event is first
 * checked against its type in the event catalog (core/event-schema-check.ts),
 * whoever subscribes to it, so a producer learns of a bad payload the same way with
 * or without subscribers. Each config's start is settled on its own, so one
 * config's failure never holds back the others; failures come back classified
 * (permanent or not) instead of thrown.
 */
export async function startEventDeliveries(
  ctx: ProcessContext,
  event: EventMessage,
  data: Uint8Array,
  configs?: Config[],
  /** How a broker brings the message back if its deliveries cannot start (workers/ordered-lanes.ts). */
  redelivered?: Redelivered,
): Promise<EventStarts> {
  // Synchronously, before any wait: an ordered config's deliveries are enqueued in arrival order.
  const lane = enterLane(
    { tenant: event.tenant, orderingKey: event.ordering_key },
    deliveryKey(event.idempotency_key, data),
    redelivered,
  );
  try {
    const starts = await startEvent(ctx, event, data, configs, lane);
    // Failed before its configs were known: it may have been bound for an ordered one.
    if (event.ordering_key !== undefined && starts.failures.some((f) => !f.configId && f.permanent === null))
      lane.failed();
    return starts;
  } finally {
    lane.leave();
  }
}

async function startEvent(
  ctx: ProcessContext,
  event: EventMessage,
  data: Uint8Array,
  configs: Config[] | undefined,
  lane: Lane,
): Promise<EventStarts> {
  const failed = (err: unknown, configId?: string): StartFailure => {
    const permanent = permanentFailureOf(err);
    return {
      ...(configId ? { configId } : {}),
      reason: permanent?.message ?? explainDatabaseTimeout(err, ctx.db.timeouts) ?? describeFailure(err),
      permanent: permanent?.source ?? null,
    };
  };
  // Known before any query when the event names no tenant, so that a dead letter of a
  // failed lookup still says whose event it was.
  let tenantId = event.tenant === undefined ? DEFAULT_TENANT_ID : configs?.[0]?.tenantId;
  const withTenant = (starts: EventStarts): EventStarts =>
    tenantId === undefined ? starts : { ...starts, tenantId };
  try {
    await checkEventSchema(ctx.catalog, event, ctx.options.enforceEventSchemas);
  } catch (err) {
    // Before matching, the tenant it named is not resolved yet: its dead letter must still
    // be that tenant's, so its own token sees it (a name that resolves to none stays null).
    if (tenantId === undefined && event.tenant !== undefined)
      tenantId = (await findTenant(ctx.db.pool, event.tenant).catch(() => null))?.id;
    return withTenant({ configs: 0, filtered: 0, overBudget: 0, started: [], failures: [failed(err)] });
  }
  let matched: Config[];
  try {
    if (configs) matched = configs;
    else ({ configs: matched, tenantId } = await matchingConfigs(ctx, event));
  } catch (err) {
    return withTenant({ configs: 0, filtered: 0, overBudget: 0, started: [], failures: [failed(err)] });
  }
  return withTenant(await startMatched(ctx, event, data, matched, failed, lane));
}

/** Starts the deliveries of the event to the configs it matched (their filters applied). */
async function startMatched(
  ctx: ProcessContext,
  event: EventMessage,
  data: Uint8Array,
  matched: Config[],
  failed: (err: unknown, configId?: string) => StartFailure,
  lane: Lane,
): Promise<EventStarts> {
  if (matched.length === 0) return { configs: 0, filtered: 0, overBudget: 0, started: [], failures: [] };
  try {
    // Before the filters: they read the event, which must be within bounds (depth) first.
    checkEventBounds(event);
  } catch (err) {
    return { configs: matched.length, filtered: 0, overBudget: 0, started: [], failures: [failed(err)] };
  }
  const { passed: targets, filteredOut: filtered, overBudget: over, broken } = applyFilters(matched, event);
  for (const o of over) {
    ctx.logger.warn(
      { configId: o.config.id, tenantId: o.config.tenantId, type: keyword(event.type), reason: o.reason },
      "payload filter over its step budget: the event counts as filtered for this config",
    );
  }
  const overBudget = over.length;
  const brokenFailures = broken.map((b) => failed(b.failure, b.config.id));
  if (targets.length === 0) {
    return { configs: broken.length, filtered, overBudget, started: [], failures: brokenFailures };
  }
  // Stored once for all its configs; its deliveries carry the reference.
  let stored: DeliveryEvent;
  try {
    stored = await storeEvent(ctx.db.pool, event);
  } catch (err) {
    return {
      configs: targets.length + broken.length,
      filtered,
      overBudget,
      started: [],
      failures: [failed(err)],
    };
  }
  const key = deliveryKey(event.idempotency_key, data);
  const settled = await Promise.allSettled(
    targets.map(async (c) => {
      const workflowId = deliveryWorkflowId(c.id, key);
      return {
        configId: c.id,
        workflowId,
        ...(await startDelivery(ctx, c, stored, workflowId, undefined, undefined, lane)),
      };
    }),
  );
  const result: EventStarts = {
    configs: targets.length + broken.length,
    filtered,
    overBudget,
    started: [],
    failures: [...brokenFailures],
  };
  settled.forEach((s, i) => {
    if (s.status === "fulfilled") result.started.push(s.value);
    else result.failures.push(failed(s.reason, targets[i]!.id));
  });
  return result;
}
