// tags: @needs-services (starts Temporal dev servers of its own)
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { type DevServer, startDevServer } from "../../common/temporal-dev-server.js";
import { searchAttributeCliArgs } from "../../workflows/search-attributes.js";
import { freePort } from "./ports.js";

/**
 * A Temporal dev server of a test's own (in memory, our search attributes registered) that
 * the test can wipe: stopped and started again on the same address with empty state, as a
 * namespace recreated or a cluster restored from an old backup would leave it; or hang
 * (SIGSTOP) and let go again.
 */
export class WipeableTemporal {
  private server!: DevServer;
  private port = 0;
  private logDir = "";

  get address(): string {
    return this.server.address;
  }

  async start(): Promise<this> {
    this.port = await freePort();
    this.logDir = await mkdtemp(path.join(tmpdir(), "etp-wipeable-"));
    this.server = await this.launch();
    return this;
  }

  /** Every workflow, schedule and history gone; the same address answers again. */
  async wipe(): Promise<void> {
    await this.server.stop();
    this.server = await this.launch();
  }

  /** Sends a signal to the server (SIGSTOP / SIGCONT: a hanging Temporal). */
  signal(signal: NodeJS.Signals): void {
    const child = this.server.process;
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  }

  async stop(): Promise<void> {
    await this.server?.stop();
  }

  private launch(): Promise<DevServer> {
    return startDevServer({
      port: this.port,
      headless: true,
      searchAttributes: searchAttributeCliArgs(),
      logFile: path.join(this.logDir, `server-${Date.now()}.log`),
    });
  }
}
