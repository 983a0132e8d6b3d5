// The Redis commands of a decision leave in one socket write (a writev of all of them),
// and with KVSTORE_PIPELINE_WINDOW those of every decision made in one event-loop turn
// do; the counts that come back are each decision's own.

import type { Duplex } from "node:stream";
import { expect } from "chai";
import type { Redis } from "ioredis";
import { pino } from "pino";
import type { CounterOp } from "../../ratelimit/limiter/counter-store.js";
import { RedisCounterStore } from "../../ratelimit/redis/counters.js";
import { loadSettings } from "../../ratelimit/settings/environment.js";
import { REDIS_URL, uniq } from "./harness.js";

interface Writes {
  /** Chunks per socket write (a write of one chunk counts as 1). */
  sizes: number[];
}

/** Records the socket writes of every pooled connection of `store`. */
function recordWrites(store: RedisCounterStore): Writes {
  const w: Writes = { sizes: [] };
  const pool = store.main as unknown as { all: Set<Redis> };
  for (const conn of pool.all) {
    const stream = conn.stream as Duplex & {
      _write: (...a: unknown[]) => void;
      _writev: ((chunks: unknown[], cb: unknown) => void) | null;
    };
    const write = stream._write.bind(stream);
    const writev = stream._writev?.bind(stream);
    stream._write = (...a: unknown[]) => {
      w.sizes.push(1);
      write(...a);
    };
    if (writev)
      stream._writev = (chunks: unknown[], cb: unknown) => {
        w.sizes.push(chunks.length);
        writev(chunks, cb);
      };
  }
  return w;
}

const ops = (key: string, n = 1): CounterOp[] =>
  Array.from({ length: n }, (_, i) => ({
    key: `${key}_${i}`,
    addend: 2,
    expireSeconds: 60,
    perSecond: false,
  }));

describe("ratelimit Redis commands leave in one write", () => {
  const logger = pino({ level: "silent" });
  let store: RedisCounterStore | undefined;

  afterEach(async () => {
    await store?.close();
    store = undefined;
  });

  async function open(window: string): Promise<RedisCounterStore> {
    store = new RedisCounterStore(
      loadSettings({ KVSTORE_URL: REDIS_URL, KVSTORE_PIPELINE_WINDOW: window, KVSTORE_POOL_SIZE: "2" }),
      logger,
    );
    expect(await store.waitReady(5000)).to.equal(true);
    // Every pooled connection ready, not only the first.
    await new Promise((r) => setTimeout(r, 300));
    return store;
  }

  it("one write per decision: INCRBY and EXPIRE of all its keys together (a connection per decision)", async () => {
    const s = await open("0");
    const writes = recordWrites(s);
    const key = `onewrite_${uniq()}`;
    expect(await s.increment(ops(key, 3))).to.deep.equal([2, 2, 2]);
    expect(writes.sizes).to.deep.equal([6]);
    expect(await s.increment(ops(key, 3))).to.deep.equal([4, 4, 4]);
    expect(writes.sizes).to.deep.equal([6, 6]);
  });

  it("with KVSTORE_PIPELINE_WINDOW, the decisions of one turn share one write", async () => {
    const s = await open("150us");
    const writes = recordWrites(s);
    const keys = Array.from({ length: 5 }, () => `window_${uniq()}`);
    const counts = await Promise.all(keys.map((k, i) => s.increment(ops(k, 1 + (i % 2)))));
    expect(counts).to.deep.equal([[2], [2, 2], [2], [2, 2], [2]]);
    expect(writes.sizes).to.deep.equal([14]);
  });
});
