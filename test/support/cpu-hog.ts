import { type ChildProcess, spawn } from "node:child_process";

// Busy loops beside a test, so that it runs on a loaded machine on purpose: a promise that
// holds only while every step is quick (a POST answered well inside a deadline counted
// from before it) fails here as it would under a loaded CI run, not only by chance.

export class CpuHog {
  private readonly loops: ChildProcess[] = [];

  /** Starts `count` processes that each spin one core until stop(). */
  start(count: number): this {
    for (let i = 0; i < count; i++)
      this.loops.push(spawn(process.execPath, ["-e", "for(;;){}"], { stdio: "ignore" }));
    return this;
  }

  /** Kills the loops it started and waits for them to exit. */
  async stop(): Promise<void> {
    const loops = this.loops.splice(0);
    await Promise.all(
      loops.map(
        (p) =>
          new Promise<void>((resolve) => {
            if (p.exitCode !== null || p.signalCode !== null) return resolve();
            p.once("exit", () => resolve());
            p.kill("SIGKILL");
          }),
      ),
    );
  }
}
