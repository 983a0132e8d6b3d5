import type { Logger } from "./logger.js";

type Step = { name: string; run: () => Promise<unknown> | unknown };

/**
 * Runs registered close steps in reverse order on SIGTERM or SIGINT, once.
 * A second signal while closing forces exit; a stuck close is cut off.
 */
export class Shutdown {
  private readonly steps: Step[] = [];
  private closing?: Promise<void>;

  constructor(
    private readonly logger: Logger,
    private readonly timeoutMs = 30_000,
  ) {
    for (const signal of ["SIGTERM", "SIGINT"] as const) {
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
