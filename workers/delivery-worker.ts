import { fileURLToPath } from "node:url";
import { Client } from "@temporalio/client";
import {
  bundleWorkflowCode,
  DefaultLogger,
  type LogLevel,
  NativeConnection,
  Runtime,
  Worker,
} from "@temporalio/worker";
import { createDeliveryActivities } from "../activities/delivery-activities.js";
import { createMaintenanceActivities } from "../activities/maintenance-activities.js";
import { createRateLimitGate } from "../activities/rate-limit-gate.js";
import { createRecoveryActivities } from "../activities/recovery-activities.js";
import type { Logger } from "../common/logger.js";
import { temporalTls } from "../common/temporal.js";
import { startAutoDeactivation } from "./auto-deactivation.js";
import { openPublisher } from "./broker/index.js";
import type { BrokerPublisher } from "./broker/types.js";
import {
  ensureMaintenanceSchedules,
  maintenanceQueue,
  restoreMaintenanceSchedules,
} from "./maintenance-schedules.js";
import { startReconciler } from "./reconciliation.js";
import type { Runtime as AppRuntime } from "./runtime.js";

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

/** How often the reconciling process checks that Temporal still has the retention schedule. */
const SCHEDULE_CHECK_MS = 60_000;

/** Task queue of the HTTP send activities, next to the workflow queue. */
export const sendQueue = (taskQueue: string) => `${taskQueue}-sends`;

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
export async function startDeliveryWorker(rt: AppRuntime): Promise<RunningWorker> {
  const { settings, logger } = rt;
  installSdkLogger(logger);
  const tls = await temporalTls(settings.temporal);
  const connection = await NativeConnection.connect({
    address: settings.temporal.address,
    ...(tls ? { tls } : {}),
    ...(settings.temporal.apiKey ? { apiKey: settings.temporal.apiKey } : {}),
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
    namespace: settings.temporal.namespace,
    shutdownGraceTime: settings.shutdownGrace,
    plugins,
  } as const;
  const rateLimit = settings.ratelimitAddr
    ? createRateLimitGate(settings.ratelimitAddr, settings.ratelimitDomain, logger)
    : undefined;
  if (rateLimit) rt.shutdown.add("rate limit client", () => rateLimit.close());
  const deps = {
    prisma: rt.db.prisma,
    logger,
    sendTimeoutMs: settings.sendTimeout,
    rateLimit,
    egress: rt.egress,
  };
  const polls = new Set(settings.taskQueues);
  const workers = await Promise.all([
    ...(polls.has("workflows")
      ? [
          Worker.create({
            ...base,
            taskQueue: settings.taskQueue,
            workflowBundle,
            // For deliveries started with --send-mode local, whichever process they
            // land on; this queue never gets (remote) activity tasks.
            activities: createDeliveryActivities(deps),
            enableNonLocalActivities: false,
            maxConcurrentLocalActivityExecutions: settings.maxConcurrentSends,
            maxConcurrentWorkflowTaskExecutions: settings.maxConcurrentWorkflowTasks,
            ...(settings.maxCachedWorkflows ? { maxCachedWorkflows: settings.maxCachedWorkflows } : {}),
            workflowTaskPollerBehavior: autoscalingPollers(settings.maxConcurrentWorkflowTasks),
          }),
        ]
      : []),
    ...(polls.has("sends")
      ? [
          Worker.create({
            ...base,
            taskQueue: sendQueue(settings.taskQueue),
            activities: createDeliveryActivities(deps),
            maxConcurrentActivityTaskExecutions: settings.maxConcurrentSends,
            activityTaskPollerBehavior: autoscalingPollers(settings.maxConcurrentSends),
          }),
        ]
      : []),
    ...(polls.has("maintenance")
      ? [
          Worker.create({
            ...base,
            taskQueue: maintenanceQueue(settings.taskQueue),
            workflowBundle,
            activities: {
              ...createMaintenanceActivities(deps),
              ...createRecoveryActivities({ ...deps, rt, ratePerSecond: settings.recoveryRate }),
            },
          }),
        ]
      : []),
  ]);
  logger.info(
    { taskQueues: workers.map((w) => w.options.taskQueue), bundleMs: Date.now() - started },
    "delivery workers started",
  );
  if (polls.has("workflows") && settings.eagerStart) {
    // The SDK reserves a slot of a worker on this connection for the same namespace and
    // queue and falls back to a plain start when none is free; the server then hands the
    // first workflow task back in the start's answer instead of queueing it for a poll.
    rt.eagerStarter = new Client({
      connection,
      namespace: settings.temporal.namespace,
      ...(rt.tracing ? { interceptors: { workflow: [rt.tracing.clientInterceptor] } } : {}),
    });
  }
  const done = Promise.all(workers.map((w) => w.run()))
    .then(() => undefined)
    .finally(() => {
      rt.eagerStarter = undefined;
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
      if (Date.now() - lastCheck < SCHEDULE_CHECK_MS) return;
      lastCheck = Date.now();
      await restoreMaintenanceSchedules(rt);
    });
    rt.shutdown.add("reconciliation", () => reconciler.stop());
    if (settings.autoDeactivateAfter > 0) {
      let audit: { publisher: BrokerPublisher; topic: string } | undefined;
      if (settings.auditTopic) {
        const publisher = await openPublisher(settings, logger);
        rt.shutdown.add("deactivation audit publisher", () => publisher.close());
        audit = { publisher, topic: settings.auditTopic };
      }
      const deactivation = startAutoDeactivation(rt, settings.autoDeactivateAfter, audit);
      rt.shutdown.add("automatic deactivation", () => deactivation.stop());
    }
  }
  return running;
}
