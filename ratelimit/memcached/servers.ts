// The memcached server list: fixed (OBJCACHE_HOST_PORT) or from a DNS SRV record
// (OBJCACHE_SRV), looked up at start and again every OBJCACHE_SRV_REFRESH when that
// is above 0. A failed refresh keeps the last list; an empty or failed first lookup
// stops the start, since no key could be placed.

import { promises as dns, type SrvRecord } from "node:dns";
import type { Logger } from "../../common/logger.js";

export type ResolveSrv = (name: string) => Promise<SrvRecord[]>;

export interface ServerSource {
  hostPorts: string[];
  srv: string;
  srvRefreshMs: number;
}

/** `host:port` per SRV target (the trailing dot of a DNS name dropped), sorted, without duplicates. */
export async function lookupSrv(name: string, resolve: ResolveSrv): Promise<string[]> {
  const records = await resolve(name);
  const out = new Set<string>();
  for (const r of records) {
    const host = r.name.replace(/\.$/, "");
    out.add(host.includes(":") ? `[${host}]:${r.port}` : `${host}:${r.port}`);
  }
  return [...out].sort();
}

export class MemcacheServerList {
  private list: string[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly source: ServerSource,
    private readonly logger: Logger,
    private readonly onChange: (servers: string[]) => void,
    private readonly resolve: ResolveSrv = (name) => dns.resolveSrv(name),
  ) {}

  get servers(): string[] {
    return this.list;
  }

  async start(): Promise<void> {
    if (!this.source.srv) {
      this.set([...new Set(this.source.hostPorts)]);
      return;
    }
    let first: string[];
    try {
      first = await lookupSrv(this.source.srv, this.resolve);
    } catch (err) {
      throw new Error(`OBJCACHE_SRV=${this.source.srv}: SRV lookup failed: ${(err as Error).message}`);
    }
    if (!first.length) throw new Error(`OBJCACHE_SRV=${this.source.srv}: the SRV record lists no servers`);
    this.set(first);
    if (this.source.srvRefreshMs > 0) {
      this.timer = setInterval(() => void this.refresh(), this.source.srvRefreshMs);
      this.timer.unref();
    }
  }

  async refresh(): Promise<void> {
    try {
      const next = await lookupSrv(this.source.srv, this.resolve);
      if (!next.length) throw new Error("the SRV record lists no servers");
      if (next.join(",") !== this.list.join(",")) {
        this.logger.info({ srv: this.source.srv, servers: next }, "memcached server list changed");
        this.set(next);
      }
    } catch (err) {
      this.logger.warn(
        { srv: this.source.srv, err: (err as Error).message, servers: this.list },
        "memcached SRV refresh failed; keeping the last server list",
      );
    }
  }

  private set(list: string[]): void {
    this.list = list;
    this.onChange(list);
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
