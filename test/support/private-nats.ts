// tags: @needs-services (starts NATS servers of its own)
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { freePort } from "./ports.js";

const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => resolve(true)).once("error", () => resolve(false));
    socket.once("close", () => socket.destroy());
    setTimeout(() => socket.destroy(), 500).unref();
  });

/**
 * A JetStream NATS server of the test's own (`nats-server -js`, as scripts/setup.sh
 * starts the shared one) on its own port and store directory, so that a test may stop
 * and restart it, store kept, or hang it, without disturbing the tests that use the shared server.
 */
export class PrivateNats {
  private child?: ChildProcess;

  private constructor(
    readonly storeDir: string,
    readonly port: number,
  ) {}

  static async create(): Promise<PrivateNats> {
    const nats = new PrivateNats(await mkdtemp(path.join(tmpdir(), "etp-nats-")), await freePort());
    await nats.start();
    return nats;
  }

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  /** Starts the server on the same port and store directory; resolves once it accepts connections. */
  async start(): Promise<void> {
    const child = spawn(
      "nats-server",
      ["-js", "-a", "127.0.0.1", "-p", String(this.port), "-sd", this.storeDir],
      { stdio: "ignore" },
    );
    this.child = child;
    const deadline = Date.now() + 15_000;
    while (!(await accepts(this.port))) {
      if (child.exitCode !== null) throw new Error(`nats-server exited with ${child.exitCode}`);
      if (Date.now() > deadline) throw new Error(`nats-server did not listen on ${this.port} within 15 s`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** A clean shutdown (SIGTERM, as a service manager stops it): JetStream writes its store first. */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
    await exited;
    clearTimeout(timer);
  }

  /** Sends a signal to the server (SIGSTOP / SIGCONT: a hanging broker). */
  signal(signal: NodeJS.Signals): void {
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) child.kill(signal);
  }

  /** Stops it for good and removes its store. */
  async destroy(): Promise<void> {
    await this.stop();
    await rm(this.storeDir, { recursive: true, force: true });
  }
}
