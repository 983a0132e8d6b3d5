import { randomUUID } from "node:crypto";
import { constants } from "node:fs";
import { access, mkdir, open, readdir, readFile, rename, unlink } from "node:fs/promises";
import path from "node:path";
import { redact } from "../common/db/database.js";
import type { Logger } from "../common/logger.js";
import type { DeadLetterEntry } from "./dead-letter-rows.js";

// Where a dead letter goes when the dead-letter store itself refuses it (the
// database unreachable, a write refused): an append-only folder on local disk,
// so that the consumer acknowledges the message and moves on without losing it.
// One message is two files: `<name>.msg`, its bytes exactly as consumed, and
// `<name>.json`, what its dead-letter row would have said (topic, position,
// reason, …) and why the store refused it. The .json is written last and is
// what marks a parked message complete. A background task imports parked
// messages into the store once it accepts them and deletes their files.

/** What a parked message's .json holds. */
export interface ParkedSidecar {
  topic: string;
  position: string;
  deliveryCount: number;
  eventType?: string | undefined;
  configId?: string | undefined;
  tenantId?: string | undefined;
  kind: DeadLetterEntry["kind"];
  cause: DeadLetterEntry["cause"];
  reason: string;
  messageBytes: number;
  parkedAt: string;
  /** Why the dead-letter store refused it. */
  writeError: string;
  /** The database it belongs to (several processes, on several databases, may share a folder). */
  database: string;
}

/** How often parked messages are offered to the store again. */
export const IMPORT_EVERY_MS = 5000;

/**
 * The database a process writes its dead letters to, as the folder records it:
 * host, port and name of the connection string (credentials and parameters
 * left out), or the embedded database's folder.
 */
export function databaseIdentity(connString: string | undefined, dataDir: string): string {
  if (!connString) return `embedded:${path.resolve(dataDir)}`;
  try {
    const u = new URL(connString);
    return `postgresql://${u.hostname}:${u.port || "5432"}${u.pathname}`;
  } catch {
    return redact(connString);
  }
}

export class DeadLetterSpool {
  private count = 0;
  /** Parked since the import round under way listed the folder (that round did not see them). */
  private parkedSinceListing = 0;
  /** Why the store refused the last message it was offered. */
  private lastRefusal = "";
  private timer?: NodeJS.Timeout;
  private importing?: Promise<void>;
  private readonly foreign = new Set<string>();

  constructor(
    readonly dir: string,
    private readonly database: string,
    private readonly logger: Logger,
  ) {}

  /** Makes sure the folder exists and can be written; the error names the flag. */
  async open(): Promise<void> {
    try {
      await mkdir(this.dir, { recursive: true, mode: 0o700 });
      await access(this.dir, constants.W_OK);
    } catch (err) {
      throw new Error(`cannot use --dead-letter-spool ${this.dir}: ${(err as Error).message}`);
    }
  }

  /** Messages of this process's database parked now (as of the last park or import round). */
  parked(): number {
    return this.count;
  }

  /** Throws while messages are parked, saying where and why. */
  check(): void {
    if (this.count === 0) return;
    const them = this.count === 1 ? "1 message" : `${this.count} messages`;
    const why = this.lastRefusal
      ? `the dead-letter store refused ${this.count === 1 ? "it" : "them"}: ${this.lastRefusal}`
      : "not imported yet";
    throw new Error(`${them} parked in ${this.dir} (${why}); imported once it accepts them`);
  }

  /** Parks a dead letter the store refused; durable once it resolves. Returns the .json's path. */
  async park(e: DeadLetterEntry, writeError: string): Promise<string> {
    const name = path.join(this.dir, `${Date.now()}-${randomUUID()}`);
    const sidecar: ParkedSidecar = {
      topic: e.msg.topic,
      position: e.msg.position,
      deliveryCount: e.msg.deliveryCount,
      eventType: e.eventType,
      configId: e.configId,
      tenantId: e.tenantId,
      kind: e.kind,
      cause: e.cause,
      reason: e.reason,
      messageBytes: e.msg.data.byteLength,
      parkedAt: new Date().toISOString(),
      writeError,
      database: this.database,
    };
    // Made again if it went away meanwhile; a file in its place still fails.
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    await writeDurably(`${name}.msg`, e.msg.data);
    await writeDurably(`${name}.json`, `${JSON.stringify(sidecar, null, 2)}\n`);
    await syncFolder(this.dir);
    this.count++;
    this.parkedSinceListing++;
    this.lastRefusal = writeError;
    return `${name}.json`;
  }

  /** Offers the parked messages to the store every IMPORT_EVERY_MS, the first time now. */
  start(write: (e: DeadLetterEntry) => Promise<void>): void {
    const round = () => {
      this.importing ??= this.importAll(write)
        .catch((err: Error) =>
          this.logger.warn({ dir: this.dir, err: err.message }, "reading parked dead letters failed"),
        )
        .finally(() => {
          this.importing = undefined;
        });
    };
    round();
    this.timer = setInterval(round, IMPORT_EVERY_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.importing;
  }

  /**
   * One round: imports the parked messages of this database, oldest first, and
   * deletes their files; stops at the first the store still refuses. Several
   * processes may import the same folder: a dead letter's row is keyed by its
   * position, so importing one twice writes it once.
   */
  private async importAll(write: (e: DeadLetterEntry) => Promise<void>): Promise<void> {
    const names = (await readdir(this.dir)).filter((n) => n.endsWith(".json")).sort();
    this.parkedSinceListing = 0;
    let left = 0;
    let refused = false;
    for (const n of names) {
      const base = path.join(this.dir, n.slice(0, -".json".length));
      let sidecar: ParkedSidecar;
      try {
        sidecar = JSON.parse(await readFile(`${base}.json`, "utf8")) as ParkedSidecar;
      } catch (err) {
        // ENOENT: another process imported it just now.
        if ((err as NodeJS.ErrnoException).code !== "ENOENT") left += this.unreadable(`${base}.json`, err);
        continue;
      }
      if (sidecar.database !== this.database) {
        if (!this.foreign.has(n)) {
          this.foreign.add(n);
          this.logger.warn(
            { file: `${base}.json`, database: sidecar.database },
            "a parked dead letter of another database: left for a process using that database",
          );
        }
        continue;
      }
      if (refused) {
        left++;
        continue;
      }
      let data: Buffer;
      try {
        data = await readFile(`${base}.msg`);
      } catch (err) {
        // The .msg goes first on import: another process imported it and is about to delete the .json.
        if ((err as NodeJS.ErrnoException).code === "ENOENT") await removeQuietly(`${base}.json`);
        else left += this.unreadable(`${base}.msg`, err);
        continue;
      }
      try {
        await write({
          msg: {
            topic: sidecar.topic,
            data,
            deliveryCount: sidecar.deliveryCount,
            position: sidecar.position,
          },
          eventType: sidecar.eventType,
          configId: sidecar.configId,
          tenantId: sidecar.tenantId,
          kind: sidecar.kind,
          cause: sidecar.cause,
          reason: sidecar.reason,
        });
      } catch (err) {
        refused = true;
        left++;
        this.lastRefusal = (err as Error).message;
        continue;
      }
      await removeQuietly(`${base}.msg`);
      await removeQuietly(`${base}.json`);
      this.logger.info(
        { position: sidecar.position, file: `${base}.json` },
        "parked dead letter imported into the store",
      );
    }
    this.count = left + this.parkedSinceListing;
  }

  /** Logs a parked file that cannot be read (it stays, and counts as parked); returns 1. */
  private unreadable(file: string, err: unknown): number {
    this.logger.error({ file, err: (err as Error).message }, "a parked dead letter cannot be read");
    return 1;
  }
}

/** Writes a file whole or not at all (a temporary name renamed once synced). */
async function writeDurably(file: string, data: Uint8Array | string): Promise<void> {
  const tmp = `${file}.tmp`;
  // Only this user reads parked messages: they hold events as published.
  const handle = await open(tmp, "wx", 0o600);
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(tmp, file);
}

/** Makes the folder's new entries durable (the renames). */
async function syncFolder(dir: string): Promise<void> {
  const handle = await open(dir, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function removeQuietly(file: string): Promise<void> {
  await unlink(file).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== "ENOENT") throw err;
  });
}
