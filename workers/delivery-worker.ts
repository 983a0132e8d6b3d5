import { fileURLToPath } from "node:url";
import { DefaultLogger, type LogLevel, NativeConnection, Runtime, Worker } from "@temporalio/worker";
import { createDeliveryActivities } from "../activities/delivery-activities.js";
import type { Logger } from "../common/logger.js";
import { temporalTls } from "../common/temporal.js";
import type { Runtime as AppRuntime } from "./runtime.js";

export interface RunningWorker {
  /** Resolves when the worker stopped; rejects when it crashed. */
  done: Promise<void>;
  state(): string;
  stop(): Promise<void>;
}

const WORKFLOWS_PATH = fileURLToPath(new URL("../workflows/index.js", import.meta.url));

let runtimeInstalled = false;
/** Routes the SDK's own logs (worker and workflow code) into our structured logger, once per process. */
function installSdkLogger(logger: Logger): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  const level = (logger.level === "trace" || logger.level === "debug" ? "DEBUG" : "WARN") as LogLevel;
  Runtime.install({
    logger: new DefaultLogger(level, (e) => {
      const method =
        e.level === "TRACE" ? "trace" : (e.level.toLowerCase() as "debug" | "info" | "warn" | "error");
      logger[method]({ sdk: "temporal", ...e.meta }, e.message);
    }),
  });
}

/** Polls the delivery task queue: runs delivery workflows and their activities; stops with the process. */
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
  const worker = await Worker.create({
    connection,
    namespace: settings.temporal.namespace,
    taskQueue: settings.taskQueue,
    workflowsPath: WORKFLOWS_PATH,
    activities: createDeliveryActivities({ prisma: rt.db.prisma, logger }),
    shutdownGraceTime: "30s",
  });
  logger.info({ taskQueue: settings.taskQueue, bundleMs: Date.now() - started }, "delivery worker started");
  const done = worker.run().finally(() => connection.close());
  done.catch((err) => {
    logger.fatal({ err }, "delivery worker crashed");
    void rt.shutdown.close().then(() => process.exit(1));
  });
  const running: RunningWorker = {
    done,
    state: () => worker.getState(),
    async stop() {
      if (worker.getState() === "RUNNING") worker.shutdown();
      await done;
    },
  };
  rt.shutdown.add("worker", () => running.stop());
  return running;
}
