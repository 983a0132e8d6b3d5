import { createHash } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import type { Logger } from "../../common/logger.js";

// Who owns which of --nats-partitions: PostgreSQL session advisory locks, one per partition,
// held on a connection of their own by the process that consumes the partition. A process
// that dies closes its connection and frees its locks at once. One that stops (SIGSTOP, a
// hung event loop, a host cut off) says nothing more on the connection, and PostgreSQL ends
// the session after SESSION_TIMEOUT_MS of silence (idle_session_timeout), which frees them;
// the process itself stops handing messages over VALID_MS after its last statement was sent,
// well before that. Each process also holds a shared "member" lock, so every one of them
// sees how many share the work and evens out the partitions among them.

/** How often the lock session is used (its heartbeat) and the partitions evened out. */
const TICK_MS = 1_000;
/** PostgreSQL ends a lock session silent this long (idle_session_timeout), freeing its locks. */
export const SESSION_TIMEOUT_MS = 15_000;
/** After its last statement was sent, how long a process still counts as owning its partitions. */
const VALID_MS = SESSION_TIMEOUT_MS / 2;
/** The member lock's second key is MEMBER + the partition count (so counts that differ show). */
const MEMBER = 0x40000000;

/** Where ownership is reported (core/metrics.ts: webhooks_nats_partitions_owned and _handovers_total). */
export interface PartitionMetrics {
  owns(partition: number, owned: boolean): void;
  handedOver(event: "acquired" | "released" | "lost", count: number): void;
}

/** What the consumer does when ownership changes. */
export interface PartitionEvents {
  /** A partition taken: consume it (once the former owner's messages are due again). */
  acquired(partition: number): void;
  /** A partition to give up: resolves once its messages are settled; its lock is released then. */
  release(partition: number): Promise<void>;
  /** Whether a partition may be given up now (none of its keys waits for a failed message to come back). */
  releasable(partition: number): boolean;
  /** The lock session ended: these may be another process's already. Stop at once. */
  lost(partitions: number[]): void;
}

/** The locks of one durable consumer (stream and name): the same in every process sharing it. */
export const lockGroup = (stream: string, durable: string): number =>
  createHash("sha256").update(`${stream}\0${durable}`).digest().readUInt32BE(0) & 0x7fffffff;

interface LockRow {
  pid: number;
  objid: string;
  mode: string;
}

export class PartitionLocks {
  private client: pg.Client | undefined;
  private pid = 0;
  private readonly owned = new Set<number>();
  private readonly releasing = new Set<number>();
  private validUntil = 0;
  private balancing = true;
  private running = false;
  private loop: Promise<void> = Promise.resolve();
  private readonly wake = new AbortController();
  /** The last look at the locks: processes sharing the work, counts of processes that differ, the error. */
  private view: { members: number; others: number[]; error?: string } = { members: 0, others: [] };

  constructor(
    private readonly o: {
      connString: string;
      group: number;
      count: number;
      logger: Logger;
      events: PartitionEvents;
      metrics: PartitionMetrics;
    },
  ) {
    for (let p = 0; p < o.count; p++) o.metrics.owns(p, false);
  }

  /** Connects (failing when PostgreSQL refuses) and takes its share; then keeps at it every second. */
  async start(): Promise<void> {
    this.running = true;
    await this.connect();
    await this.tick();
    this.loop = this.run();
  }

  /** Whether this process owns `partition` now (its lock session answered within VALID_MS). */
  holds(partition: number): boolean {
    return this.owned.has(partition) && Date.now() < this.validUntil;
  }

  /** Takes and gives up nothing more (a stopping process); the session stays until close(). */
  freeze(): void {
    this.balancing = false;
  }

  /** Ends the session: PostgreSQL frees every lock it held. */
  async close(): Promise<void> {
    this.running = false;
    this.wake.abort();
    await this.loop;
    const client = this.client;
    this.client = undefined;
    this.owned.clear();
    for (let p = 0; p < this.o.count; p++) this.o.metrics.owns(p, false);
    await client?.end().catch(() => {});
  }

  /** For health: what this process owns among how many; throws when processes disagree on the count. */
  describe(): string {
    const { count } = this.o;
    if (this.view.others.length > 0)
      throw new Error(
        `processes consuming with --nats-partitions ${this.view.others.join(", ")} share this consumer with this one's ${count}: their partitions differ, so one ordering key may be handed over by two processes; run every consuming process with the same count`,
      );
    const owned = [...this.owned].sort((a, b) => a - b);
    const what =
      owned.length > 0
        ? `owns partitions ${owned.join(",")} of ${count}`
        : `owns none of ${count} partitions`;
    if (!this.client) return `${what} (no lock session: ${this.view.error ?? "connecting"})`;
    return `${what} (${this.view.members} consuming processes)`;
  }

  private async run(): Promise<void> {
    while (this.running) {
      await sleep(TICK_MS, undefined, { signal: this.wake.signal }).catch(() => {});
      if (this.running) await this.tick();
    }
  }

  private async connect(): Promise<pg.Client> {
    const client = new pg.Client({
      connectionString: this.o.connString,
      application_name: "webhooks-nats-partitions",
      keepAlive: true,
      connectionTimeoutMillis: 5_000,
      query_timeout: 5_000,
    });
    client.on("error", (err) => this.drop(err, client));
    client.on("end", () => this.drop(new Error("the lock session ended"), client));
    await client.connect();
    try {
      await client.query(`SET idle_session_timeout = ${SESSION_TIMEOUT_MS}`);
      const { rows } = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
      await client.query("SELECT pg_advisory_lock_shared($1::int4, $2::int4)", [
        this.o.group,
        MEMBER + this.o.count,
      ]);
      this.pid = rows[0]!.pid;
    } catch (err) {
      await client.end().catch(() => {});
      throw new Error(`cannot hold NATS partition locks in PostgreSQL: ${(err as Error).message}`);
    }
    this.client = client;
    return client;
  }

  /** One heartbeat: the locks as PostgreSQL holds them, then this process's share evened out. */
  private async tick(): Promise<void> {
    try {
      const client = this.client ?? (await this.connect());
      const sent = Date.now();
      const { rows } = await client.query<LockRow>(
        `SELECT pid, objid::text AS objid, mode FROM pg_locks
          WHERE locktype = 'advisory' AND granted AND objsubid = 2 AND classid = $1::int8::oid
            AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
        [this.o.group],
      );
      this.validUntil = sent + VALID_MS;
      this.view.error = undefined;
      if (this.balancing) await this.balance(client, rows);
    } catch (err) {
      const message = (err as Error).message;
      if (!this.client && message !== this.view.error)
        this.o.logger.warn({ err: message }, "no NATS partition lock session: trying again every second");
      this.view.error = message;
      this.drop(err as Error, this.client);
    }
  }

  /**
   * Even shares: a process takes free partitions while it has the fewest and fewer than
   * its share (the count over the processes, rounded up); the first process with the most
   * gives one up while it has two more than the one with the fewest.
   */
  private async balance(client: pg.Client, rows: LockRow[]): Promise<void> {
    const { count } = this.o;
    const members = new Set<number>();
    const others = new Set<number>();
    const holder = new Map<number, number>();
    for (const r of rows) {
      const objid = Number(r.objid);
      if (objid === MEMBER + count) members.add(r.pid);
      else if (objid > MEMBER) others.add(objid - MEMBER);
      else if (objid < count && r.mode === "ExclusiveLock") holder.set(objid, r.pid);
    }
    this.view = { members: members.size, others: [...others] };
    const held = (pid: number) => [...holder.values()].filter((h) => h === pid).length;
    const counts = [...members].map((pid) => ({ pid, n: held(pid) }));
    const fewest = Math.min(...counts.map((c) => c.n));
    const most = Math.max(...counts.map((c) => c.n));
    const share = Math.ceil(count / Math.max(1, members.size));
    const mine = this.owned.size;
    const free = Array.from({ length: count }, (_, p) => p).filter((p) => !holder.has(p));
    if (free.length > 0 && mine < share && mine <= fewest) {
      // Each process tries the free partitions from its own place, so that they rarely collide.
      const place = (p: number) => (((p - this.pid) % count) + count) % count;
      free.sort((a, b) => place(a) - place(b));
      for (const p of free) {
        if (this.owned.size >= share) break;
        const { rows: got } = await client.query<{ ok: boolean }>(
          "SELECT pg_try_advisory_lock($1::int4, $2::int4) AS ok",
          [this.o.group, p],
        );
        if (got[0]?.ok) this.took(p, members.size);
      }
    } else if (this.releasing.size === 0 && mine >= fewest + 2) {
      const first = counts.filter((c) => c.n === most).sort((a, b) => a.pid - b.pid)[0];
      const which = [...this.owned].sort((a, b) => b - a).find((p) => this.o.events.releasable(p));
      if (first?.pid === this.pid && which !== undefined) void this.giveUp(which, members.size);
    }
  }

  private took(partition: number, members: number): void {
    this.owned.add(partition);
    this.o.metrics.owns(partition, true);
    this.o.metrics.handedOver("acquired", 1);
    this.o.logger.info(
      { partition, of: this.o.count, processes: members },
      "NATS partition taken: consuming it once the former owner's unacknowledged messages are due again",
    );
    this.o.events.acquired(partition);
  }

  /** Gives a partition up to even out the work: its messages settled first, then the lock. */
  private async giveUp(partition: number, members: number): Promise<void> {
    this.releasing.add(partition);
    const client = this.client;
    this.o.logger.info(
      { partition, of: this.o.count, processes: members },
      "NATS partition given up to even out the work: settling its messages",
    );
    try {
      await this.o.events.release(partition);
      if (client && client === this.client && this.owned.has(partition)) {
        await client.query("SELECT pg_advisory_unlock($1::int4, $2::int4)", [this.o.group, partition]);
        this.owned.delete(partition);
        this.o.metrics.owns(partition, false);
        this.o.metrics.handedOver("released", 1);
        this.o.logger.info({ partition }, "NATS partition released");
      }
    } catch (err) {
      this.drop(err as Error, client);
    } finally {
      this.releasing.delete(partition);
    }
  }

  /** The session is gone (or no longer trusted): every partition it held is lost. */
  private drop(err: Error, from: pg.Client | undefined): void {
    if (!from || from !== this.client) return;
    this.client = undefined;
    this.validUntil = 0;
    const lost = [...this.owned].sort((a, b) => a - b);
    this.owned.clear();
    void from.end().catch(() => {});
    for (const p of lost) this.o.metrics.owns(p, false);
    if (lost.length > 0) this.o.metrics.handedOver("lost", lost.length);
    this.o.logger.warn(
      { partitions: lost, err: err.message },
      "the PostgreSQL session holding the NATS partition locks ended: its partitions are lost and taken again when they are free",
    );
    if (lost.length > 0) this.o.events.lost(lost);
  }
}
