import { Client } from "@temporalio/client";
import { type InjectedSinks, NativeConnection, type Worker } from "@temporalio/worker";
import { LocalFirstSends } from "../activities/local-first.js";
import { createRateLimitGate } from "../activities/rate-limit-gate.js";
import type { DestinationClients } from "../activities/send-destination.js";
import { temporalTls } from "../common/temporal.js";
import {
  limitDeliveryLatencyTenants,
  observeDeliveriesInFlight,
  observeDetachedFirstSends,
  observeWorkflowTaskSlots,
} from "../core/metrics.js";
import type { ProcessContext } from "../core/process-context.js";
import { firstSendSettledSignal } from "../workflows/delivery.js";
import type { DeliverySinks } from "../workflows/delivery-sinks.js";
import { DeliveriesInFlight } from "./deliveries-in-flight.js";
import { destinationClients } from "./destination-clients.js";
import { startMaintenanceLoops } from "./maintenance-loops.js";
import { workflowStatus } from "./reconcile-repairs.js";
import { installSdkRuntime, sdkLogger } from "./sdk-runtime.js";
import { startTaskQueueStats } from "./task-queue-stats.js";
import {
  type ActivityDeps,
  createMaintenanceWorker,
  createSendsWorker,
  createWorkflowWorker,
  type WorkerBase,
  workflowPollsPerQueue,
} from "./task-queue-workers.js";
import { workerVersioning } from "./worker-versioning.js";
import { savedWorkflowBundle } from "./workflow-bundle.js";
import { WorkflowTaskSlots } from "./workflow-task-slots.js";

export interface RunningWorker {
  /** Resolves when every worker stopped; rejects when one crashed. */
  done: Promise<void>;
  state(): string;
  stop(): Promise<void>;
}

/**
 * Polls the task queues of delivery chosen by --task-queues: workflow tasks
 * (`--task-queue`), HTTP sends (`<queue>-sends`) and maintenance
 * (`<queue>-maintenance`, with its schedules ensured). The workflow bundle is
 * built once for all of them. Stops with the process.
 *
 * `clients`: the process's endpoints' OAuth tokens and broker connections, shared with the
 * API's test deliveries when both run in one process.
 */
export async function startDeliveryWorker(
  ctx: ProcessContext,
  clients: DestinationClients = destinationClients(ctx),
): Promise<RunningWorker> {
  const { options, logger } = ctx;
  await installSdkRuntime(logger, options.temporalSdkMetrics);
  limitDeliveryLatencyTenants(options.deliveryLatencyTenants);
  const connection = await connectWorkers(ctx);
  const started = Date.now();
  // --tracing: the OpenTelemetry interceptors (bundled into the workflow code) and the sink
  // exporting workflow spans, on every worker of this process.
  const plugins = ctx.tracing ? [ctx.tracing.plugin] : [];
  const versioning = await workerVersioning(options);
  const workflowBundle = await savedWorkflowBundle(
    logger,
    sdkLogger(logger),
    plugins,
    undefined,
    versioning?.entry,
  );
  const base: WorkerBase = {
    connection,
    namespace: options.temporal.namespace,
    shutdownGraceTime: options.shutdownGrace,
    plugins,
    ...(versioning ? { workerDeploymentOptions: versioning.deploymentOptions } : {}),
  };
  const inFlight = new DeliveriesInFlight(options.maxDeliveriesInFlight);
  const localFirst = new LocalFirstSends(options.maxConcurrentSends);
  const deps = activityDeps(ctx, clients, inFlight, localFirst);
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
      ? [createWorkflowWorker(ctx, base, deps, { workflowBundle, sinks, workflowSlots, pollsPerQueue })]
      : []),
    ...(polls.has("sends") ? [createSendsWorker(ctx, base, deps)] : []),
    ...(polls.has("maintenance") ? [createMaintenanceWorker(ctx, base, deps, workflowBundle)] : []),
  ]);
  logger.info(
    {
      taskQueues: workers.map((w) => w.options.taskQueue),
      bundleMs: Date.now() - started,
      workerVersion: versioning?.deploymentOptions.version ?? "unversioned",
    },
    "delivery workers started",
  );
  // Versioned, no eager start: the server (1.32.2, by its source) hands an eager start's first
  // task to the starting process whatever the deployment's current or ramping version, which
  // would pin the delivery to this process's build.
  if (polls.has("workflows") && options.eagerStart && !versioning) {
    // The SDK reserves a slot of a worker on this connection for the same namespace and
    // queue and falls back to a plain start when none is free; the server then hands the
    // first workflow task back in the start's answer instead of queueing it for a poll.
    ctx.eagerStarter = new Client({
      connection,
      namespace: options.temporal.namespace,
      ...(ctx.tracing ? { interceptors: { workflow: [ctx.tracing.clientInterceptor] } } : {}),
    });
    // With no more slots than the polls can hold (two loops, each one slot beyond its
    // polls), a start could wait for nothing.
    if (options.maxConcurrentWorkflowTasks > 2 * (pollsPerQueue + 1)) ctx.startSlots = workflowSlots;
    ctx.inFlight = inFlight;
  }
  if (polls.has("workflows")) {
    observeWorkflowTaskSlots(workflowSlots);
    observeDeliveriesInFlight(inFlight);
    observeDetachedFirstSends(localFirst);
  }
  const running = runWorkers(ctx, workers, connection);
  ctx.shutdown.add("workers", () => running.stop());
  if (options.taskQueueStatsInterval > 0) {
    const stats = startTaskQueueStats(ctx, options.taskQueueStatsInterval);
    ctx.shutdown.add("task queue stats", () => stats.stop());
  }
  if (polls.has("maintenance")) await startMaintenanceLoops(ctx);
  return running;
}

async function connectWorkers(ctx: ProcessContext): Promise<NativeConnection> {
  const { temporal } = ctx.options;
  const tls = await temporalTls(temporal);
  return NativeConnection.connect({
    address: temporal.address,
    ...(tls ? { tls } : {}),
    ...(temporal.apiKey ? { apiKey: temporal.apiKey } : {}),
  });
}

/**
 * What the activities send with: the database, the rate limit gate, egress policy, secrets,
 * OAuth tokens, broker connections, and the counts of sends in flight and of first sends sent locally.
 */
function activityDeps(
  ctx: ProcessContext,
  { oauthTokens, brokers }: DestinationClients,
  inFlight: DeliveriesInFlight,
  localFirst: LocalFirstSends,
): ActivityDeps {
  const { options, logger } = ctx;
  const rateLimit = options.ratelimitAddr
    ? createRateLimitGate(options.ratelimitAddr, options.ratelimitDomain, logger)
    : undefined;
  if (rateLimit) ctx.shutdown.add("rate limit client", () => rateLimit.close());
  // Before the database closes (added later, so it runs sooner): detached first sends write their rows.
  ctx.shutdown.add("detached first sends", () => localFirst.drain());
  return {
    onPost: (workflowId: string) => inFlight.posting(workflowId),
    localFirst,
    firstSendSettled: (workflowId: string) =>
      ctx.temporal.workflow.getHandle(workflowId).signal(firstSendSettledSignal),
    workflowStatus: (workflowId: string) => workflowStatus(ctx, workflowId),
    prisma: ctx.db.prisma,
    pool: ctx.db.pool,
    logger,
    sendTimeoutMs: options.sendTimeout,
    signatureHeaders: options.signatureHeaders,
    rateLimit,
    egress: ctx.egress,
    secrets: ctx.secrets,
    oauthTokens,
    brokers,
  };
}

/** Runs the workers until they stop; a crash of one stops the process. */
function runWorkers(ctx: ProcessContext, workers: Worker[], connection: NativeConnection): RunningWorker {
  const done = Promise.all(workers.map((w) => w.run()))
    .then(() => undefined)
    .finally(() => {
      ctx.eagerStarter = undefined;
      ctx.startSlots = undefined;
      ctx.inFlight = undefined;
      observeWorkflowTaskSlots(undefined);
      observeDeliveriesInFlight(undefined);
      observeDetachedFirstSends(undefined);
      return connection.close();
    });
  done.catch((err) => {
    ctx.logger.fatal({ err }, "delivery worker crashed");
    void ctx.shutdown.close().then(() => process.exit(1));
  });
  return {
    done,
    state: () => workers.find((w) => w.getState() !== "RUNNING")?.getState() ?? "RUNNING",
    async stop() {
      for (const w of workers) if (w.getState() === "RUNNING") w.shutdown();
      await done.catch(() => {});
    },
  };
}
