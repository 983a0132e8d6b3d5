import type { RequestHandler } from "express";
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

/** Prometheus metrics of a webhooks process, served at /metrics. */
export const registry = new Registry();
collectDefaultMetrics({ register: registry, prefix: "webhooks_process_" });

const statusClass = (code: number) => (code === 0 ? "error" : `${Math.floor(code / 100)}xx`);

export const attemptsTotal = new Counter({
  name: "webhooks_delivery_attempts_total",
  help: "HTTP attempts by the status they recorded and the answer's class (error = no answer)",
  labelNames: ["status", "status_class"] as const,
  registers: [registry],
});

export const attemptDuration = new Histogram({
  name: "webhooks_attempt_duration_seconds",
  help: "Time from sending a webhook to its answer (or the transport error)",
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [registry],
});

export const unreadableSecrets = new Gauge({
  name: "webhooks_unreadable_secrets",
  help: "Stored secrets and credentials that did not open with their key at startup (altered, or copied from another row; among the values the check sampled): their configs' sends fail, saying why",
  registers: [registry],
});

export const sendsClaimedElsewhere = new Counter({
  name: "webhooks_sends_claimed_elsewhere_total",
  help: "Send executions that found their attempt being sent by another live execution and backed off instead of POSTing it again",
  registers: [registry],
});

export const sendsWaitingForSlot = new Counter({
  name: "webhooks_sends_waiting_for_slot_total",
  help: "Sends that found every send slot of their config taken (its maxConcurrency) and waited instead of POSTing",
  registers: [registry],
});

export const workflowsStarted = new Counter({
  name: "webhooks_workflows_started_total",
  help: "Delivery workflows started (one per event and matching config)",
  registers: [registry],
});

export const workflowsStartedEagerly = new Counter({
  name: "webhooks_workflows_started_eagerly_total",
  help: "Of the started delivery workflows, those whose first workflow task the server handed straight to this process's worker (eager start)",
  registers: [registry],
});

/** This process's database pool (common/db/database.ts), read at each scrape. */
let databasePool: { totalCount: number; idleCount: number; waitingCount: number } | undefined;
export function observeDatabasePool(pool: typeof databasePool): void {
  databasePool = pool;
}

// Every query of a process (API, consumer, sends, attempt rows) shares one pool: when
// deliveries slow down, these say whether they queue for a connection.
new Gauge({
  name: "webhooks_db_pool_connections",
  help: "Connections of this process's database pool, busy (lent to a query or transaction) or idle (of --storage-sqldb-pool-size)",
  labelNames: ["state"] as const,
  registers: [registry],
  collect() {
    const total = databasePool?.totalCount ?? 0;
    const idle = databasePool?.idleCount ?? 0;
    this.set({ state: "busy" }, total - idle);
    this.set({ state: "idle" }, idle);
  },
});

new Gauge({
  name: "webhooks_db_pool_waiting",
  help: "Queries of this process waiting for a free database connection (steadily above 0: raise --storage-sqldb-pool-size, or the database is slow)",
  registers: [registry],
  collect() {
    this.set(databasePool?.waitingCount ?? 0);
  },
});

/** The delivery worker's workflow-task slots, read at each scrape; unset where this process runs none. */
let workflowTaskSlots: { held: number; waitingStarts: number } | undefined;
export function observeWorkflowTaskSlots(slots: typeof workflowTaskSlots): void {
  workflowTaskSlots = slots;
}

new Gauge({
  name: "webhooks_workflow_task_slots_held",
  help: "Workflow-task slots of this process's delivery worker held by polls and running tasks (of --max-concurrent-workflow-tasks)",
  registers: [registry],
  collect() {
    this.set(workflowTaskSlots?.held ?? 0);
  },
});

new Gauge({
  name: "webhooks_starts_waiting_for_slot",
  help: "Delivery starts waiting for a free workflow-task slot so that they start eagerly (at most 10 s each)",
  registers: [registry],
  collect() {
    this.set(workflowTaskSlots?.waitingStarts ?? 0);
  },
});

/** First sends of --send-mode local-first by where they went (activities/local-first.ts). */
export const firstSends = new Counter({
  name: "webhooks_first_sends_total",
  help: "First sends of local-first deliveries: local (answered within --local-send-budget in the workflow worker), over_budget (moved to the sends queue, POST kept), skipped (sent through the queue: config cooling down or too many POSTs out)",
  labelNames: ["outcome"] as const,
  registers: [registry],
});

/** POSTs of local first sends still out past their budget in this process. */
let detachedFirstSends: { detachedCount: number } | undefined;
export function observeDetachedFirstSends(sends: typeof detachedFirstSends): void {
  detachedFirstSends = sends;
}

new Gauge({
  name: "webhooks_first_sends_detached",
  help: "POSTs of local first sends still out past --local-send-budget in this process (at most --max-concurrent-sends)",
  registers: [registry],
  collect() {
    this.set(detachedFirstSends?.detachedCount ?? 0);
  },
});

/** Deliveries of this process with a send in flight (workers/deliveries-in-flight.ts); unset where it runs no workflow worker. */
let deliveriesInFlight: { size: number; waiting: number } | undefined;
export function observeDeliveriesInFlight(count: typeof deliveriesInFlight): void {
  deliveriesInFlight = count;
}

new Gauge({
  name: "webhooks_deliveries_in_flight",
  help: "Deliveries of this process's workflow worker with a send under way (new starts wait at --max-deliveries-in-flight)",
  registers: [registry],
  collect() {
    this.set(deliveriesInFlight?.size ?? 0);
  },
});

new Gauge({
  name: "webhooks_starts_waiting_for_deliveries",
  help: "Delivery starts waiting for a delivery of this process to finish its send (at most 10 s each)",
  registers: [registry],
  collect() {
    this.set(deliveriesInFlight?.waiting ?? 0);
  },
});

export const messagesConsumed = new Counter({
  name: "webhooks_messages_consumed_total",
  help: "Broker messages settled, by topic and result (delivered = every start done, dead_lettered = some went to the dead-letter store, rejected = not an event message, dead-lettered whole)",
  labelNames: ["topic", "result"] as const,
  registers: [registry],
});

export const messagesRedelivered = new Counter({
  name: "webhooks_messages_redelivered_total",
  help: "Broker messages handed back for a later delivery because a start failed in a way that may pass (Temporal or the database unavailable)",
  labelNames: ["topic"] as const,
  registers: [registry],
});

export const deadLettersRecorded = new Counter({
  name: "webhooks_dead_letters_total",
  help: "Messages (or one config's share of one) put in the dead-letter store, by topic and cause: message (not an event message), event (over a bound), config (row unusable), start (refused by Temporal), transient (failures past --broker-max-deliveries)",
  labelNames: ["topic", "cause"] as const,
  registers: [registry],
});

export const deadLettersParked = new Counter({
  name: "webhooks_dead_letters_parked_total",
  help: "Dead letters the store refused (after a few tries) and that were parked on disk in --dead-letter-spool instead, by topic",
  labelNames: ["topic"] as const,
  registers: [registry],
});

/** Dead letters parked now in this process's spool (workers/dead-letter-spool.ts); unset where it consumes nothing. */
let parkedNow: (() => number) | undefined;
export function observeParkedDeadLetters(count: () => number): void {
  parkedNow = count;
}

new Gauge({
  name: "webhooks_dead_letters_parked",
  help: "Dead letters waiting in --dead-letter-spool for the store to accept them (the health check fails while any does)",
  registers: [registry],
  collect() {
    this.set(parkedNow?.() ?? 0);
  },
});

/** Ordering keys held by a failed head (workers/ordering-keys.ts); read at each scrape, in API processes. */
let blockedKeys: { count: () => Promise<number>; last: number; reading?: Promise<void> } | undefined;
export function observeBlockedOrderingKeys(count: () => Promise<number>): void {
  blockedKeys = { count, last: 0 };
}
/** How long a scrape waits for the count before it answers with the last one read. */
const BLOCKED_KEYS_READ_WAIT_MS = 1000;

new Gauge({
  name: "webhooks_ordering_keys_blocked",
  help: "Ordering keys of ordered configs held by a head that failed for good (onFailure block) until an operator skips or replays it",
  registers: [registry],
  // Read from the database: every API process of a cluster sees the same count.
  aggregator: "max",
  async collect() {
    const keys = blockedKeys;
    if (!keys) return;
    // An exhausted pool or a stalled database must not take /metrics down with it (that is
    // when operators read it): past a second the scrape answers with the last count read.
    keys.reading ??= keys
      .count()
      .then((n) => {
        keys.last = n;
      })
      .catch(() => undefined)
      .finally(() => {
        keys.reading = undefined;
      });
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      keys.reading,
      new Promise((r) => {
        timer = setTimeout(r, BLOCKED_KEYS_READ_WAIT_MS);
      }),
    ]);
    clearTimeout(timer);
    this.set(keys.last);
  },
});

export const deadLetterReplays = new Counter({
  name: "webhooks_dead_letter_replays_total",
  help: "Replays of dead letters through the API, by result: started, conflict (cannot start as it is), unavailable (try again later)",
  labelNames: ["result"] as const,
  registers: [registry],
});

export const configListRefreshes = new Counter({
  name: "webhooks_config_list_refreshes_total",
  help: "Refreshes of the API's cached full config list by how: changes (only the configs written since), full (every config read again), uncached (version unreadable, rendered per request)",
  labelNames: ["kind"] as const,
  registers: [registry],
});

export const eventsIngested = new Counter({
  name: "webhooks_events_ingested_total",
  help: "Events received on POST /events, by result: accepted (every delivery started or had started), rejected (not an event message), failed (some delivery could not start)",
  labelNames: ["result"] as const,
  registers: [registry],
});

export const eventsFiltered = new Counter({
  name: "webhooks_events_filtered_total",
  help: "Deliveries not started because the event did not pass the config's payload filter (one per event and config whose types it matched), by reason: filter (it did not match), budget (the filter would have gone over its step budget)",
  labelNames: ["reason"],
  registers: [registry],
});

export const eventSchemaFailures = new Counter({
  name: "webhooks_event_schema_failures_total",
  help: "Events whose payload fails their type's schema in the event catalog, by type: refused (POST /events 400, dead letter from the broker) with --enforce-event-schemas, delivered without",
  labelNames: ["type"] as const,
  registers: [registry],
});

export const deprecatedEvents = new Counter({
  name: "webhooks_deprecated_events_total",
  help: "Events of a type the event catalog marks deprecated (still delivered), by type",
  labelNames: ["type"] as const,
  registers: [registry],
});

export const reconciled = new Counter({
  name: "webhooks_reconciliation_total",
  help: "Overdue queued deliveries checked by reconciliation, by outcome: running (left to its workflow), restarted (workflow lost, started again from its row), closed (failed with a reason), ended (it had ended meanwhile: nothing to do), failed (the repair itself failed; tried again next round)",
  labelNames: ["outcome"] as const,
  registers: [registry],
});

export const recoveryDeliveries = new Counter({
  name: "webhooks_recovery_deliveries_total",
  help: "Failed deliveries taken up by bulk recoveries (POST /configs/{id}/recover), by outcome: started (a replay started), already_started (this key had replayed it), failed (its replay could not start)",
  labelNames: ["outcome"] as const,
  registers: [registry],
});

export const recoveriesFinished = new Counter({
  name: "webhooks_recoveries_finished_total",
  help: "Bulk recoveries finished, by state: done (every matching delivery taken up) or failed (stopped; the recovery says why)",
  labelNames: ["state"] as const,
  registers: [registry],
});

export const configsAutoDeactivated = new Counter({
  name: "webhooks_configs_auto_deactivated_total",
  help: "Configs deactivated automatically after failing for --auto-deactivate-after",
  registers: [registry],
});

export function recordAttempt(status: string, statusCode: number, durationMs: number): void {
  attemptsTotal.inc({ status, status_class: statusClass(statusCode) });
  attemptDuration.observe(durationMs / 1000);
}

/** GET /metrics in the Prometheus text format, from `source` (this process's metrics by default). */
export const metricsHandlerFrom =
  (source: () => Promise<string>): RequestHandler =>
  async (_req, res) => {
    res.type(registry.contentType).send(await source());
  };

/** Other exporters of this process whose text each scrape appends (the Temporal SDK's: workers/sdk-runtime.ts). */
const otherSources: (() => Promise<string>)[] = [];
export function addMetricsSource(read: () => Promise<string>): void {
  otherSources.push(read);
}

/** This process's metrics: the registry's, then the other exporters' (each ends its own lines). */
export async function processMetrics(): Promise<string> {
  const texts = await Promise.all([registry.metrics(), ...otherSources.map((read) => read())]);
  return texts.map((t) => (t === "" || t.endsWith("\n") ? t : `${t}\n`)).join("");
}

export const metricsHandler = metricsHandlerFrom(processMetrics);

export const sdkMetricsReadFailures = new Counter({
  name: "webhooks_sdk_metrics_read_failures_total",
  help: "Scrapes of /metrics that could not read the Temporal SDK's exporter on its loopback port and served the product's metrics only",
  registers: [registry],
});

const natsPartitionsOwned = new Gauge({
  name: "webhooks_nats_partitions_owned",
  help: "NATS partitions (--nats-partitions) this process consumes: 1 for each it owns, 0 for the others",
  labelNames: ["partition"] as const,
  registers: [registry],
});

const natsPartitionHandovers = new Counter({
  name: "webhooks_nats_partition_handovers_total",
  help: "NATS partitions this process took (acquired), gave up to even out the work (released), or lost with its lock session (lost)",
  labelNames: ["event"] as const,
  registers: [registry],
});

/** Ownership of --nats-partitions, as core/broker/partition-locks.ts reports it. */
export const natsPartitionMetrics = {
  owns: (partition: number, owned: boolean) =>
    natsPartitionsOwned.set({ partition: String(partition) }, owned ? 1 : 0),
  handedOver: (event: "acquired" | "released" | "lost", count: number) =>
    natsPartitionHandovers.inc({ event }, count),
};

// The backlog Temporal reports for each task queue of the service (workers/task-queue-stats.ts),
// exported by the one worker process that samples it: the others export none of these series.
const queueGauge = (name: string, help: string) =>
  new Gauge({ name, help, labelNames: ["task_queue", "task_type"] as const, registers: [registry] });
const queueBacklog = queueGauge(
  "webhooks_task_queue_backlog_tasks",
  "Tasks waiting in the task queue as Temporal reports them (approximate; sticky workflow tasks not counted), by queue and task type (workflow, activity)",
);
const queueBacklogAge = queueGauge(
  "webhooks_task_queue_backlog_age_seconds",
  "Age of the oldest task waiting in the task queue as Temporal reports it (0 when none waits)",
);
const queueAddRate = queueGauge(
  "webhooks_task_queue_add_rate",
  "Tasks added to the task queue per second as Temporal reports it (its average over the last 30 s)",
);
const queueDispatchRate = queueGauge(
  "webhooks_task_queue_dispatch_rate",
  "Tasks handed to workers from the task queue per second as Temporal reports it (its average over the last 30 s); below the add rate, the backlog grows",
);
const queueSampledAt = queueGauge(
  "webhooks_task_queue_stats_sampled_timestamp_seconds",
  "When the task queue's stats were last read from Temporal (Unix time)",
);
const queueGauges = [queueBacklog, queueBacklogAge, queueAddRate, queueDispatchRate, queueSampledAt];
const queueSampler = new Gauge({
  name: "webhooks_task_queue_stats_sampler",
  help: "1 in the one worker process that reads the task queues' stats from Temporal (--task-queue-stats-interval), 0 in the others",
  registers: [registry],
});
queueSampler.set(0);

export interface TaskQueueStats {
  backlog: number;
  backlogAgeSeconds: number;
  addRate: number;
  dispatchRate: number;
}

/** The task queues' stats as workers/task-queue-stats.ts reads them. */
export const taskQueueStatsMetrics = {
  sampled(taskQueue: string, taskType: string, stats: TaskQueueStats, at: number): void {
    const labels = { task_queue: taskQueue, task_type: taskType };
    queueBacklog.set(labels, stats.backlog);
    queueBacklogAge.set(labels, stats.backlogAgeSeconds);
    queueAddRate.set(labels, stats.addRate);
    queueDispatchRate.set(labels, stats.dispatchRate);
    queueSampledAt.set(labels, at / 1000);
  },
  /** No fresh value for this queue: its series go rather than stay at a stale value. */
  unknown(taskQueue: string, taskType: string): void {
    const labels = { task_queue: taskQueue, task_type: taskType };
    for (const g of queueGauges) g.remove(labels);
  },
  /** Whether this process is the sampler; one that is not exports no queue series. */
  sampling(on: boolean): void {
    queueSampler.set(on ? 1 : 0);
    if (!on)
      for (const g of [queueBacklog, queueBacklogAge, queueAddRate, queueDispatchRate, queueSampledAt])
        g.reset();
  },
};

// Accept to end of delivery, the delivery SLO: observed where the attempt row that ends a
// delivery is written (activities/send-attempt.ts, activities/batch-send.ts).
const deliveryLatency = new Histogram({
  name: "webhooks_delivery_latency_seconds",
  help: "Time from an event's acceptance to the end of its delivery to one config, once per delivery: outcome delivered (its first 2xx answer) or failed (given up after an attempt); tenant is the config's tenant id for the first --delivery-latency-tenants tenants this process sees, other for the rest",
  labelNames: ["tenant", "outcome"] as const,
  buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 14400, 86400],
  registers: [registry],
});

/** Tenants with a label value of their own: at most `max`, the first seen; their series stay. */
let latencyTenants = { max: 20, named: new Set<string>() };
export function limitDeliveryLatencyTenants(max: number): void {
  latencyTenants = { max, named: new Set() };
}
function tenantLabel(tenantId: string): string {
  const { max, named } = latencyTenants;
  if (named.has(tenantId)) return tenantId;
  if (named.size >= max) return "other";
  named.add(tenantId);
  return tenantId;
}

/**
 * Observes the deliveries an attempt row just ended: status `success` (delivered) or
 * `failed` (given up); any other status ends nothing. `deliveries` (those the row's send
 * POSTed) carry their acceptance time; a delivery started before it was recorded has none
 * and is left out.
 */
export function observeDeliveryEnd(
  tenantId: string,
  status: string,
  endedAt: Date,
  deliveries: readonly { acceptedAt?: string | undefined }[],
): void {
  const outcome = status === "success" ? "delivered" : status === "failed" ? "failed" : undefined;
  if (!outcome) return;
  for (const d of deliveries) {
    const accepted = d.acceptedAt ? Date.parse(d.acceptedAt) : Number.NaN;
    if (Number.isNaN(accepted)) continue;
    // Clocks of the accepting and the sending process may differ by a little.
    const seconds = Math.max(0, endedAt.getTime() - accepted) / 1000;
    deliveryLatency.observe({ tenant: tenantLabel(tenantId), outcome }, seconds);
  }
}
