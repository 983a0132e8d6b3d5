import { fileURLToPath } from "node:url";
import { Client } from "@temporalio/client";
import {
  bundleWorkflowCode,
  DefaultLogger,
  type InjectedSinks,
  type LogLevel,
  NativeConnection,
  Runtime,
  Worker,
} from "@temporalio/worker";
import { createBatchActivities } from "../activities/batch-activities.js";
import { createDeliveryActivities } from "../activities/delivery-activities.js";
import { LocalFirstSends } from "../activities/local-first.js";
import { createMaintenanceActivities } from "../activities/maintenance-activities.js";
import { OAuthTokens } from "../activities/oauth-tokens.js";
import { createOrderingActivities } from "../activities/ordering-activities.js";
import { createRateLimitGate } from "../activities/rate-limit-gate.js";
import { createRecoveryActivities } from "../activities/recovery-activities.js";
import type { Logger } from "../common/logger.js";
import { temporalTls } from "../common/temporal.js";
import type { BrokerPublisher } from "../core/broker/types.js";
import {
  observeDeliveriesInFlight,
  observeDetachedFirstSends,
  observeWorkflowTaskSlots,
} from "../core/metrics.js";
import { openPublisher } from "../core/open-broker.js";
import type { ProcessContext } from "../core/process-context.js";
import { sealPlainSecrets } from "../core/secret-resealing.js";
import { firstSendSettledSignal } from "../workflows/delivery.js";
import type { DeliverySinks } from "../workflows/delivery-sinks.js";
import { startAutoDeactivation } from "./auto-deactivation.js";
import { DeliveriesInFlight } from "./deliveries-in-flight.js";
import { ensureMaintenanceSchedules, restoreMaintenanceSchedules } from "./maintenance-schedules.js";
import { startReconciler } from "./reconciliation.js";
import { startDelivery } from "./start-delivery.js";
import { maintenanceQueue, sendQueue } from "./task-queues.js";
import { WorkflowTaskSlots } from "./workflow-task-slots.js";

export interface RunningWorker {
  /** Resolves when every worker stopped; rejects when one crashed. */
  done: Promise<void>;
  state(): string;
  stop(): Promise<void>;
}

/**
 * Pollers scaled by the server's feedback instead of the fixed 10: a backlog
 * gets up to half the slots polling, an idle queue keeps two.
 */
const autoscalingPollers = (slots: number) =>
  ({ type: "autoscaling", minimum: 2, initial: 10, maximum: Math.max(10, Math.floor(slots / 2)) }) as const;

/**
 * Workflow-task polls per queue. The SDK runs the poller behaviour twice (the sticky and
 * the normal queue), and each of the two poll loops holds one slot more than its polls
 * while it waits to poll again: with this many, polls hold at most about half the slots,
 * and the other half is left to running tasks and to the eager first tasks of starts
 * (workflow-task-slots.ts).
 */
const workflowPollsPerQueue = (slots: number) => Math.max(1, Math.floor(slots / 4) - 1);

/** How often the reconciling process checks that Temporal still has the retention schedule. */
const SCHEDULE_CHECK_MS = 60_000;

const WORKFLOWS_PATH = fileURLToPath(new URL("../workflows/index.js", import.meta.url));

/** The SDK's logs (worker, bundler, workflow code) as our structured logs; chatty below WARN unless debugging. */
function sdkLogger(logger: Logger): DefaultLogger {
  const level = (logger.level === "trace" || logger.level === "debug" ? "DEBUG" : "WARN") as LogLevel;
  return new DefaultLogger(level, (e) => {
    const method =
      e.level === "TRACE" ? "trace" : (e.level.toLowerCase() as "debug" | "info" | "warn" | "error");
    logger[method]({ sdk: "temporal", ...e.meta }, e.message);
  });
}

let runtimeInstalled = false;
function installSdkLogger(logger: Logger): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  Runtime.install({ logger: sdkLogger(logger) });
}

/**
 * Polls the task queues of delivery chosen by --task-queues: workflow tasks
 * (`--task-queue`), HTTP sends (`<queue>-sends`) and maintenance
 * (`<queue>-maintenance`, with its schedules ensured). The workflow bundle is
 * built once for all of them. Stops with the process.
 */
/**
 * `oauthTokens`: the process's cache of endpoints' OAuth tokens, shared with the API's test
 * deliveries when both run in one process.
 */
export async function startDeliveryWorker(
  rt: ProcessContext,
  oauthTokens = new OAuthTokens(rt.egress),
): Promise<RunningWorker> {
  const { options, logger } = rt;
  installSdkLogger(logger);
  const tls = await temporalTls(options.temporal);
  const connection = await NativeConnection.connect({
    address: options.temporal.address,
    ...(tls ? { tls } : {}),
    ...(options.temporal.apiKey ? { apiKey: options.temporal.apiKey } : {}),
  });
  const started = Date.now();
  // --tracing: the OpenTelemetry interceptors (bundled into the workflow code) and the sink
  // exporting workflow spans, on every worker of this process.
  const plugins = rt.tracing ? [rt.tracing.plugin] : [];
  const workflowBundle = await bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    logger: sdkLogger(logger),
    plugins,
  });
  const base = {
    connection,
    namespace: options.temporal.namespace,
    shutdownGraceTime: options.shutdownGrace,
    plugins,
  } as const;
  const rateLimit = options.ratelimitAddr
    ? createRateLimitGate(options.ratelimitAddr, options.ratelimitDomain, logger)
    : undefined;
  if (rateLimit) rt.shutdown.add("rate limit client", () => rateLimit.close());
  const inFlight = new DeliveriesInFlight(options.maxDeliveriesInFlight);
  const localFirst = new LocalFirstSends(options.maxConcurrentSends);
  // Before the database closes (added later, so it runs sooner): detached first sends write their rows.
  rt.shutdown.add("detached first sends", () => localFirst.drain());
  const deps = {
    onPost: (workflowId: string) => inFlight.posting(workflowId),
    localFirst,
    firstSendSettled: (workflowId: string) =>
      rt.temporal.workflow.getHandle(workflowId).signal(firstSendSettledSignal),
    prisma: rt.db.prisma,
    pool: rt.db.pool,
    logger,
    sendTimeoutMs: options.sendTimeout,
    rateLimit,
    egress: rt.egress,
    secrets: rt.secrets,
    oauthTokens,
  };
  const polls = new Set(options.taskQueues);
  const workflowSlots = new WorkflowTaskSlots(options.maxConcurrentWorkflowTasks);
  const sinks: InjectedSinks<DeliverySinks> = {
    deliveries: {
      sendStarted: { fn: (info) => void inFlight.add(info.workflowId) },
      sendFinished: { fn: (info) => inFlight.remove(info.workflowId) },
    },
  };
  const pollsPerQueue = workflowPollsPerQueue(options.maxConcurrentWorkflowTasks);
  const workers = await Promise.all([
    ...(polls.has("workflows")
      ? [
          Worker.create({
            ...base,
            taskQueue: options.taskQueue,
            workflowBundle,
            sinks,
            // For deliveries started with --send-mode local, whichever process they
            // land on; this queue never gets (remote) activity tasks.
            activities: {
              ...createDeliveryActivities(deps),
              ...createOrderingActivities(deps),
              // The batch collectors' local activity (handRowsToBatch).
              ...createBatchActivities(deps),
            },
            enableNonLocalActivities: false,
            tuner: {
              workflowTaskSlotSupplier: workflowSlots,
              localActivityTaskSlotSupplier: { type: "fixed-size", numSlots: options.maxConcurrentSends },
              // This worker runs no other kinds of task.
              activityTaskSlotSupplier: { type: "fixed-size", numSlots: 1 },
              nexusTaskSlotSupplier: { type: "fixed-size", numSlots: 1 },
            },
            ...(options.maxCachedWorkflows ? { maxCachedWorkflows: options.maxCachedWorkflows } : {}),
            workflowTaskPollerBehavior: {
              type: "autoscaling",
              minimum: Math.min(2, pollsPerQueue),
              initial: pollsPerQueue,
              maximum: pollsPerQueue,
            },
          }),
        ]
      : []),
    ...(polls.has("sends")
      ? [
          Worker.create({
            ...base,
            taskQueue: sendQueue(options.taskQueue),
            activities: { ...createDeliveryActivities(deps), ...createBatchActivities(deps) },
            maxConcurrentActivityTaskExecutions: options.maxConcurrentSends,
            activityTaskPollerBehavior: autoscalingPollers(options.maxConcurrentSends),
          }),
        ]
      : []),
    ...(polls.has("maintenance")
      ? [
          Worker.create({
            ...base,
            taskQueue: maintenanceQueue(options.taskQueue),
            workflowBundle,
            activities: {
              ...createMaintenanceActivities(deps),
              ...createRecoveryActivities({
                ...deps,
                startReplay: (config, event, workflowId, replayOf) =>
                  startDelivery(rt, config, event, workflowId, replayOf),
                ratePerSecond: options.recoveryRate,
              }),
            },
          }),
        ]
      : []),
  ]);
  logger.info(
    { taskQueues: workers.map((w) => w.options.taskQueue), bundleMs: Date.now() - started },
    "delivery workers started",
  );
  if (polls.has("workflows") && options.eagerStart) {
    // The SDK reserves a slot of a worker on this connection for the same namespace and
    // queue and falls back to a plain start when none is free; the server then hands the
    // first workflow task back in the start's answer instead of queueing it for a poll.
    rt.eagerStarter = new Client({
      connection,
      namespace: options.temporal.namespace,
      ...(rt.tracing ? { interceptors: { workflow: [rt.tracing.clientInterceptor] } } : {}),
    });
    // With no more slots than the polls can hold (two loops, each one slot beyond its
    // polls), a start could wait for nothing.
    if (options.maxConcurrentWorkflowTasks > 2 * (pollsPerQueue + 1)) rt.startSlots = workflowSlots;
    rt.inFlight = inFlight;
  }
  if (polls.has("workflows")) {
    observeWorkflowTaskSlots(workflowSlots);
    observeDeliveriesInFlight(inFlight);
    observeDetachedFirstSends(localFirst);
  }
  const done = Promise.all(workers.map((w) => w.run()))
    .then(() => undefined)
    .finally(() => {
      rt.eagerStarter = undefined;
      rt.startSlots = undefined;
      rt.inFlight = undefined;
      observeWorkflowTaskSlots(undefined);
      observeDeliveriesInFlight(undefined);
      observeDetachedFirstSends(undefined);
      return connection.close();
    });
  done.catch((err) => {
    logger.fatal({ err }, "delivery worker crashed");
    void rt.shutdown.close().then(() => process.exit(1));
  });
  const running: RunningWorker = {
    done,
    state: () => workers.find((w) => w.getState() !== "RUNNING")?.getState() ?? "RUNNING",
    async stop() {
      for (const w of workers) if (w.getState() === "RUNNING") w.shutdown();
      await done.catch(() => {});
    },
  };
  rt.shutdown.add("workers", () => running.stop());
  if (polls.has("maintenance")) {
    await ensureMaintenanceSchedules(rt);
    let lastCheck = Date.now();
    const reconciler = startReconciler(rt, async () => {
      // Plain secrets another writer stored (plain SQL, the entity server): a look at an empty index.
      await sealPlainSecrets(rt.db.pool, rt.secrets, logger);
      if (Date.now() - lastCheck < SCHEDULE_CHECK_MS) return;
      lastCheck = Date.now();
      await restoreMaintenanceSchedules(rt);
    });
    rt.shutdown.add("reconciliation", () => reconciler.stop());
    if (options.autoDeactivateAfter > 0) {
      let audit: { publisher: BrokerPublisher; topic: string } | undefined;
      if (options.auditTopic) {
        const publisher = await openPublisher(options, logger);
        rt.shutdown.add("deactivation audit publisher", () => publisher.close());
        audit = { publisher, topic: options.auditTopic };
      }
      const deactivation = startAutoDeactivation(rt, options.autoDeactivateAfter, audit);
      rt.shutdown.add("automatic deactivation", () => deactivation.stop());
    }
  }
  return running;
}
