// Runs grpc-floor-server.ts as the service under test of a floor-* scenario: the bench
// drives it with the same generator and requests as ours and the reference, and the
// table gives every closed-loop row's throughput as a ratio to it (vsFloor).

import { fileURLToPath } from "node:url";
import { ServiceProcess } from "../../test/support/process.js";
import { processFamily } from "../support/proc.js";

const LISTENING = /^listening (\d+)$/m;

export class GrpcFloorService {
  readonly pullStatsUrl = "";
  /** With `probe`, it loads alloc-probe.ts as ours does (alloc-count.ts). */
  readonly counted: boolean;
  address = "";
  private readonly server: ServiceProcess;

  /**
   * `processes` node:cluster processes on one port (1: the process serves alone); `server`
   * node-http2 runs http2-floor-server.ts instead (one process, gRPC framed without grpc-js).
   */
  constructor(
    processes = 1,
    probe?: { nodeArgs: string[]; env: Record<string, string> },
    server: "grpc-js" | "node-http2" = "grpc-js",
  ) {
    this.counted = probe !== undefined;
    const script =
      server === "grpc-js" ? ["./grpc-floor-server.js", String(processes)] : ["./http2-floor-server.js"];
    this.server = new ServiceProcess(
      { file: process.execPath, cwd: process.cwd() },
      [...(probe?.nodeArgs ?? []), fileURLToPath(new URL(script[0]!, import.meta.url)), ...script.slice(1)],
      probe?.env,
    );
  }

  async ready(): Promise<void> {
    await this.server.waitForOutput(LISTENING);
    this.address = `127.0.0.1:${LISTENING.exec(this.server.output)![1]}`;
  }

  /** The process, then its serving processes when it has any (as the service's family). */
  pids(): number[] {
    return processFamily(this.server.child.pid!);
  }

  /** The floor never answers with an error. */
  async errorCount(): Promise<number> {
    return 0;
  }

  async stop(): Promise<void> {
    await this.server.stop();
  }
}
