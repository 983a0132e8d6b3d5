// Counters in memcached, as the reference does it: one multi-get per node reads the current values,
// the decision uses value + hits, and the increments run after the answer, in the background: `incr`,
// and for a key that does not exist yet `add` with the window's expiry, and `incr` again if another
// instance added it first. So concurrent requests can briefly exceed the quota
// (docs/spec-rules.md#object-cache-increments). Each key lives on one node (ring.ts); a node that
// cannot be reached fails the decisions whose keys it holds, with the node named, like a Redis
// outage.

import type { ConnectionOptions } from "node:tls";
import type { Logger } from "../../common/logger.js";
import { CacheError, type CounterOp, type CounterStore } from "../limiter/counter-store.js";
import { parseHostPort } from "../settings/addresses.js";
import { clientTlsOptions } from "../settings/client-tls.js";
import type { ObjCacheSettings } from "../settings/environment.js";
import { checkMemcacheKey } from "./key.js";
import { MemcacheNode } from "./node.js";
import { pickNode } from "./ring.js";
import { MemcacheServerList, type ResolveSrv } from "./servers.js";

/**
 * Connect and reply timeout per memcached operation (no setting is specified:
 * docs/spec-rules.md#object-cache-backend).
 */
export const MEMCACHE_TIMEOUT_MS = 1000;
/** memcached reads an expiry above 30 days as a Unix time, not as seconds from now. */
const RELATIVE_EXPIRY_LIMIT = 30 * 24 * 3600;

export class MemcacheCounterStore implements CounterStore {
  private nodes: MemcacheNode[] = [];
  private addresses: string[] = [];
  private readonly byAddress = new Map<string, MemcacheNode>();
  private readonly inflight = new Set<Promise<void>>();
  private readonly serverList: MemcacheServerList;
  private readonly tls: ConnectionOptions | undefined;
  private lastIncrementError = "";

  constructor(
    private readonly settings: ObjCacheSettings,
    private readonly logger: Logger,
    resolveSrv?: ResolveSrv,
    private readonly now: () => number = Date.now,
  ) {
    this.tls = clientTlsOptions(settings);
    this.serverList = new MemcacheServerList(settings, logger, (list) => this.setServers(list), resolveSrv);
  }

  /** Reads the server list (the SRV lookup); throws when there is none. */
  start(): Promise<void> {
    return this.serverList.start();
  }

  get servers(): string[] {
    return this.addresses;
  }

  node(address: string): MemcacheNode | undefined {
    return this.byAddress.get(address);
  }

  private setServers(list: string[]): void {
    const next: MemcacheNode[] = [];
    for (const address of list) {
      let node = this.byAddress.get(address);
      if (!node) {
        const hp = parseHostPort(address);
        if (!hp) {
          this.logger.warn({ address }, "ignoring a memcached address that is not host:port");
          continue;
        }
        node = new MemcacheNode(address, hp, {
          maxIdle: this.settings.maxIdleConns,
          timeoutMs: MEMCACHE_TIMEOUT_MS,
          tls: this.tls,
        });
        this.byAddress.set(address, node);
      }
      next.push(node);
    }
    for (const [address, node] of this.byAddress) {
      if (!next.includes(node)) {
        node.close();
        this.byAddress.delete(address);
      }
    }
    this.nodes = next;
    this.addresses = next.map((n) => n.address);
  }

  /** Keys grouped by the node holding them: node index → positions in `keys`. */
  private group(keys: string[]): Map<number, number[]> {
    const groups = new Map<number, number[]>();
    for (let i = 0; i < keys.length; i++) {
      const n = pickNode(keys[i]!, this.addresses);
      const g = groups.get(n);
      if (g) g.push(i);
      else groups.set(n, [i]);
    }
    return groups;
  }

  /** Current values (0 when missing), one multi-get per node, nodes in parallel. */
  private async read(keys: string[]): Promise<number[]> {
    for (const k of keys) checkMemcacheKey(k);
    const out: number[] = new Array(keys.length).fill(0);
    if (!keys.length) return out;
    if (!this.nodes.length) throw new CacheError("memcache: no servers");
    await Promise.all(
      [...this.group(keys)].map(async ([n, idx]) => {
        const unique = [...new Set(idx.map((i) => keys[i]!))];
        const [values] = (await this.nodes[n]!.send(`get ${unique.join(" ")}\r\n`, ["values"])) as [
          Map<string, string>,
        ];
        for (const i of idx) {
          const v = values.get(keys[i]!);
          out[i] = v === undefined ? 0 : Number(v);
        }
      }),
    );
    return out;
  }

  async get(keys: { key: string }[]): Promise<number[]> {
    return this.read(keys.map((k) => k.key));
  }

  async increment(ops: CounterOp[]): Promise<number[]> {
    const keys = ops.map((o) => o.key);
    const current = await this.read(keys);
    // The same key twice in one request: the second sees the first's hits.
    const running = new Map<string, number>();
    const after = ops.map((op, i) => {
      const v = (running.get(op.key) ?? current[i]!) + op.addend;
      running.set(op.key, v);
      return v;
    });
    const todo = ops.filter((op) => op.addend > 0);
    if (todo.length) this.track(this.applyIncrements(todo));
    return after;
  }

  private track(p: Promise<void>): void {
    this.inflight.add(p);
    void p.finally(() => this.inflight.delete(p));
  }

  /** incr; for missing keys add; for keys added meanwhile by someone else incr again. */
  private async applyIncrements(ops: CounterOp[]): Promise<void> {
    const nowSeconds = Math.floor(this.now() / 1000);
    await Promise.all(
      [...this.group(ops.map((o) => o.key))].map(async ([n, idx]) => {
        const node = this.nodes[n];
        if (!node) return;
        try {
          const batch = idx.map((i) => ops[i]!);
          const incr = (list: CounterOp[]) =>
            node.send(
              list.map((op) => `incr ${op.key} ${op.addend}\r\n`).join(""),
              list.map(() => "line"),
            );
          const missing = (await incr(batch)).flatMap((r, j) => (r === "NOT_FOUND" ? [batch[j]!] : []));
          if (!missing.length) return;
          const added = await node.send(
            missing
              .map((op) => {
                const value = String(op.addend);
                const exp =
                  op.expireSeconds > RELATIVE_EXPIRY_LIMIT ? nowSeconds + op.expireSeconds : op.expireSeconds;
                return `add ${op.key} 0 ${exp} ${value.length}\r\n${value}\r\n`;
              })
              .join(""),
            missing.map(() => "line"),
          );
          const raced = missing.filter((_, j) => added[j] === "NOT_STORED");
          if (raced.length) await incr(raced);
          this.lastIncrementError = "";
        } catch (err) {
          // The answer was already given; the hits of this batch are lost, as in the reference.
          const message = (err as Error).message;
          if (message !== this.lastIncrementError)
            this.logger.warn({ err: message }, "memcached increment failed");
          this.lastIncrementError = message;
        }
      }),
    );
  }

  /** Resolves when every increment started so far has finished. */
  async flush(): Promise<void> {
    while (this.inflight.size) await Promise.all([...this.inflight]);
  }

  /** Healthy while some node answered its last operation (all nodes start reachable). */
  connected(): boolean {
    return this.nodes.some((n) => n.reachable);
  }

  async close(): Promise<void> {
    this.serverList.stop();
    await Promise.race([this.flush(), new Promise((r) => setTimeout(r, 2000).unref())]);
    for (const n of this.nodes) n.close();
  }
}
