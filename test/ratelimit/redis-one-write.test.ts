// The Redis commands of a decision leave in one socket write (a writev of all of them),
// and so do those of every decision made in one event-loop turn: on one pooled connection
// by default, on the turn's shared connection with KVSTORE_PIPELINE_WINDOW; the counts
// that come back are each decision's own.

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
  /** The pooled connection (its index) that made each write. */
  conns: number[];
}

/** Records the socket writes of every pooled connection of `store`. */
function recordWrites(store: RedisCounterStore): Writes {
  const w: Writes = { sizes: [], conns: [] };
  const pool = store.main as unknown as { all: Set<Redis> };
  for (const [index, conn] of [...pool.all].entries()) {
    const stream = conn.stream as Duplex & {
      _write: (...a: unknown[]) => void;
      _writev: ((chunks: unknown[], cb: unknown) => void) | null;
    };
    const write = stream._write.bind(stream);
    const writev = stream._writev?.bind(stream);
    stream._write = (...a: unknown[]) => {
      w.sizes.push(1);
      w.conns.push(index);
      write(...a);
    };
    if (writev)
      stream._writev = (chunks: unknown[], cb: unknown) => {
        w.sizes.push(chunks.length);
        w.conns.push(index);
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

/** Five decisions of one turn (seven keys): their own counts back, all fourteen commands in one write. */
async function fiveDecisionsInOneWrite(s: RedisCounterStore, writes: Writes): Promise<void> {
  const keys = Array.from({ length: 5 }, () => `turn_${uniq()}`);
  const counts = await Promise.all(keys.map((k, i) => s.increment(ops(k, 1 + (i % 2)))));
  expect(counts).to.deep.equal([[2], [2, 2], [2], [2, 2], [2]]);
  expect(writes.sizes).to.deep.equal([14]);
}

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

  it("one write per decision: INCRBY and EXPIRE of all its keys together", async () => {
    const s = await open("0");
    const writes = recordWrites(s);
    const key = `onewrite_${uniq()}`;
    expect(await s.increment(ops(key, 3))).to.deep.equal([2, 2, 2]);
    expect(writes.sizes).to.deep.equal([6]);
    expect(await s.increment(ops(key, 3))).to.deep.equal([4, 4, 4]);
    expect(writes.sizes).to.deep.equal([6, 6]);
  });

  it("the decisions of one turn share a pooled connection and one write; a later turn takes another", async () => {
    const s = await open("0");
    const writes = recordWrites(s);
    await fiveDecisionsInOneWrite(s, writes);
    // A decision of the next turn finds that connection waiting for its replies and takes
    // the pool's other one.
    writes.sizes.length = 0;
    writes.conns.length = 0;
    const first = s.increment(ops(`turn_${uniq()}`));
    const second = new Promise<number[]>((resolve, reject) =>
      setImmediate(() => s.increment(ops(`turn_${uniq()}`)).then(resolve, reject)),
    );
    expect(await Promise.all([first, second])).to.deep.equal([[2], [2]]);
    expect(writes.sizes).to.deep.equal([2, 2]);
    expect(new Set(writes.conns).size, "connections of the two turns").to.equal(2);
  });

  it("a turn's decisions wait in the corked socket until the turn ends; together's leave when it returns", async () => {
    const s = await open("0");
    const writes = recordWrites(s);
    const inTurn = [s.increment(ops(`turn_${uniq()}`)), s.increment(ops(`turn_${uniq()}`))];
    expect(writes.sizes, "written before the turn's end").to.deep.equal([]);
    await Promise.all(inTurn);
    expect(writes.sizes).to.deep.equal([4]);
    writes.sizes.length = 0;
    // From a setImmediate callback (where the coalescing store sends its batches), the
    // turn's end would be a loop iteration away: together writes as soon as it returns.
    const together = await new Promise<Promise<number[][]>>((resolve) =>
      setImmediate(() => {
        let made: Promise<number[][]> | undefined;
        s.together(() => {
          made = Promise.all([
            s.increment(ops(`together_${uniq()}`)),
            s.increment(ops(`together_${uniq()}`)),
          ]);
        });
        expect(writes.sizes, "written when together returned").to.deep.equal([4]);
        resolve(made!);
      }),
    );
    expect(await together).to.deep.equal([[2], [2]]);
  });

  it("with KVSTORE_PIPELINE_WINDOW, the decisions of one turn share one write", async () => {
    const s = await open("150us");
    const writes = recordWrites(s);
    await fiveDecisionsInOneWrite(s, writes);
  });
});
