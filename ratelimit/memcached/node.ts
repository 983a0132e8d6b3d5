// One memcached server: connections opened on demand, at most
// OBJCACHE_MAX_IDLE_CONNS kept open between uses (more may be open while busy),
// and whether the last attempt to reach it worked (for the health check).

import type { ConnectionOptions } from "node:tls";
import { CacheError } from "../limiter/counter-store.js";
import type { HostPort } from "../settings/addresses.js";
import { MemcacheConnection, type Reply } from "./connection.js";

export interface NodeOptions {
  maxIdle: number;
  timeoutMs: number;
  tls: ConnectionOptions | undefined;
}

export class MemcacheNode {
  private readonly idle: MemcacheConnection[] = [];
  private open = 0;
  reachable = true;
  lastError = "";
  private closed = false;

  constructor(
    readonly address: string,
    private readonly hp: HostPort,
    private readonly opts: NodeOptions,
  ) {}

  /** Connections open now (idle or in use). */
  get connections(): number {
    return this.open;
  }

  /** Sends one batch on a connection of this node; failures become CacheError naming the node. */
  async send(payload: string, expect: ("line" | "values")[]): Promise<Reply[]> {
    if (this.closed) throw new CacheError(`memcache ${this.address}: client closed`);
    let conn = this.idle.pop();
    while (conn && !conn.alive) {
      this.open--;
      conn = this.idle.pop();
    }
    try {
      if (!conn) {
        conn = await MemcacheConnection.open({
          ...this.hp,
          timeoutMs: this.opts.timeoutMs,
          tls: this.opts.tls,
        });
        this.open++;
      }
      const replies = await conn.send(payload, expect, this.opts.timeoutMs);
      this.reachable = true;
      this.release(conn);
      return replies;
    } catch (err) {
      if (conn) {
        conn.close();
        this.open--;
      }
      this.reachable = false;
      this.lastError = (err as Error).message;
      throw new CacheError(`memcache ${this.address}: ${this.lastError}`);
    }
  }

  private release(conn: MemcacheConnection): void {
    if (!this.closed && conn.alive && this.idle.length < this.opts.maxIdle) this.idle.push(conn);
    else {
      conn.close();
      this.open--;
    }
  }

  close(): void {
    this.closed = true;
    for (const c of this.idle.splice(0)) {
      c.close();
      this.open--;
    }
  }
}
