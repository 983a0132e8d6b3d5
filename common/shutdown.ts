import cluster from "node:cluster";
import type { Logger } from "./logger.js";

type Step = { name: string; run: () => Promise<unknown> | unknown };

/**
 * Runs registered close steps in reverse order on SIGTERM or SIGINT, once.
 * A second signal while closing forces exit; a stuck close is cut off.
 * A cluster worker stops on SIGTERM only: Ctrl-C sends SIGINT to the whole
 * process group, and its primary answers that by sending SIGTERM to each.
 */
export class Shutdown {
  private readonly steps: Step[] = [];
  private closing?: Promise<void>;

  constructor(
    private readonly logger: Logger,
    private readonly timeoutMs = 30_000,
  ) {
    if (cluster.isWorker) process.on("SIGINT", () => {});
    for (const signal of cluster.isWorker ? (["SIGTERM"] as const) : (["SIGTERM", "SIGINT"] as const)) {
      process.on(signal, () => {
        if (this.closing) {
          logger.warn({ signal }, "second signal while shutting down: exiting now");
          process.exit(1);
        }
        logger.info({ signal }, "shutting down");
        void this.close().then(() => process.exit(0));
      });
    }
  }

  add(name: string, run: Step["run"]): void {
    this.steps.push({ name, run });
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      const timer = setTimeout(() => {
        this.logger.error({ timeoutMs: this.timeoutMs }, "shutdown took too long: exiting");
        process.exit(1);
      }, this.timeoutMs);
      timer.unref();
      for (const step of this.steps.reverse()) {
        try {
          await step.run();
          this.logger.debug({ step: step.name }, "closed");
        } catch (err) {
          this.logger.error({ step: step.name, err }, "error while closing");
        }
      }
      clearTimeout(timer);
      this.logger.info("stopped");
    })();
    return this.closing;
  }
}
