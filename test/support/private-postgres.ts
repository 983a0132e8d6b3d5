// tags: @needs-services (starts PostgreSQL servers of its own)
import { execFile } from "node:child_process";
import { chownSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { freePort } from "./ports.js";

const BIN = "/usr/lib/postgresql/15/bin";
const run = promisify(execFile);

/**
 * A PostgreSQL cluster of its own (Debian's binaries, run as the postgres
 * user) that a test may stop and restart, or hang, without touching the shared server.
 */
export class PrivatePostgres {
  private constructor(
    readonly dataDir: string,
    readonly port: number,
  ) {}

  static async create(): Promise<PrivatePostgres> {
    const dir = mkdtempSync(path.join(tmpdir(), "etp-pg-"));
    chownSync(dir, 101, 104);
    const pg = new PrivatePostgres(path.join(dir, "data"), await freePort());
    await pg.asPostgres(`${BIN}/initdb`, "-D", pg.dataDir, "-U", "postgres", "--auth=trust", "-E", "UTF8");
    await pg.start();
    return pg;
  }

  get url(): string {
    return `postgresql://postgres@127.0.0.1:${this.port}/postgres`;
  }

  /** Asynchronous, so that the test's own servers (receivers, health polls) keep answering meanwhile. */
  start(): Promise<void> {
    return this.asPostgres(
      `${BIN}/pg_ctl`,
      "-D",
      this.dataDir,
      "-o",
      `-p ${this.port} -k ${path.dirname(this.dataDir)} -c listen_addresses=127.0.0.1`,
      "-w",
      "-l",
      path.join(path.dirname(this.dataDir), "server.log"),
      "start",
    );
  }

  /** A fast shutdown, as `pg_ctlcluster … stop` does: sessions are cut, in-flight statements fail. */
  stop(): Promise<void> {
    return this.asPostgres(`${BIN}/pg_ctl`, "-D", this.dataDir, "-m", "fast", "-w", "stop");
  }

  /**
   * Stops every process of the cluster (SIGSTOP): the postmaster, so that no connection
   * is accepted, and each backend, so that no open session answers. `resume` lets them go.
   */
  async pause(): Promise<void> {
    for (const pid of await this.processes()) process.kill(pid, "SIGSTOP");
  }

  async resume(): Promise<void> {
    for (const pid of (await this.processes()).reverse()) process.kill(pid, "SIGCONT");
  }

  /** The postmaster first, then the processes it started. */
  private async processes(): Promise<number[]> {
    const postmaster = Number(readFileSync(path.join(this.dataDir, "postmaster.pid"), "utf8").split("\n")[0]);
    const children = await run("pgrep", ["-P", String(postmaster)]).then(
      ({ stdout }) => stdout.split("\n").filter(Boolean).map(Number),
      () => [] as number[], // pgrep exits 1 when it finds none
    );
    return [postmaster, ...children];
  }

  /** Stops it if it runs and removes its directory (some 40 MB). */
  async destroy(): Promise<void> {
    await this.stop().catch(() => {}); // already stopped
    rmSync(path.dirname(this.dataDir), { recursive: true, force: true });
  }

  private async asPostgres(...argv: string[]): Promise<void> {
    const command = argv.map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(" ");
    await run("su", ["postgres", "-s", "/bin/sh", "-c", command]);
  }
}
