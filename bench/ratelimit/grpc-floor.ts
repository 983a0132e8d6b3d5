// Runs grpc-floor-server.ts as the service under test of a floor-* scenario: the bench
// drives it with the same generator and requests as ours and the reference, and the
// table gives every closed-loop row's throughput as a ratio to it (vsFloor).

import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

export class GrpcFloorService {
  readonly pullStatsUrl = "";
  address = "";
  private readonly child: ChildProcess;
  private output = "";

  constructor() {
    const script = fileURLToPath(new URL("./grpc-floor-server.js", import.meta.url));
    this.child = spawn(process.execPath, [script], { stdio: ["ignore", "pipe", "pipe"] });
    this.child.stdout?.on("data", (d) => {
      this.output += d;
    });
    this.child.stderr?.on("data", (d) => {
      this.output += d;
    });
  }

  async ready(): Promise<void> {
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      const port = /^listening (\d+)$/m.exec(this.output)?.[1];
      if (port) {
        this.address = `127.0.0.1:${port}`;
        return;
      }
      if (this.child.exitCode !== null) throw new Error(`grpc floor exited:\n${this.output}`);
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`grpc floor did not start:\n${this.output}`);
  }

  pids(): number[] {
    return [this.child.pid!];
  }

  /** The floor never answers with an error. */
  async errorCount(): Promise<number> {
    return 0;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => {
      if (this.child.exitCode !== null) return resolve();
      this.child.once("exit", () => resolve());
      this.child.kill("SIGTERM");
    });
  }
}
