// ioredis ends a client for good when one of its connects is cut short (after a Sentinel
// failover its failover detector can disconnect while a reconnect still asks the
// sentinels; the connect fails with "Connection is closed." and the client stays ended).
// The pool opens such a client again: decisions and the health check come back.

import { expect } from "chai";
import type { Redis } from "ioredis";
import { pino } from "pino";
import { RedisCounterStore } from "../../ratelimit/redis/counters.js";
import { loadSettings } from "../../ratelimit/settings/environment.js";
import { waitFor } from "../support/redis-servers.js";
import { REDIS_URL, uniq } from "./harness.js";

/** The pooled clients of `store` (the pool keeps them private). */
const clients = (store: RedisCounterStore) => [...(store.main as unknown as { all: Set<Redis> }).all];

/** Makes `conn` reconnect and cuts that connect short, as the failover detector does. */
function cutReconnectShort(conn: Redis): Promise<Error> {
  const internals = conn as unknown as { connector: { disconnect(): void } };
  const failed = new Promise<Error>((resolve) => {
    const onError = (err: Error) => {
      if (err.message !== "Connection is closed.") return;
      conn.off("error", onError);
      resolve(err);
    };
    conn.on("error", onError);
  });
  // "connecting" is emitted before the connector looks whether it is still wanted.
  conn.once("connecting", () => internals.connector.disconnect());
  conn.disconnect(true);
  return failed;
}

describe("ratelimit Redis pool: a client that ioredis ended for good", function () {
  this.timeout(20_000);
  let store: RedisCounterStore | undefined;

  afterEach(async () => {
    await store?.close();
    store = undefined;
  });

  it("is opened again after a connect cut short, and serves decisions", async () => {
    store = new RedisCounterStore(
      loadSettings({ KVSTORE_URL: REDIS_URL, KVSTORE_POOL_SIZE: "2" }),
      pino({ level: "silent" }),
    );
    expect(await store.waitReady(5000)).to.equal(true);
    await waitFor(
      "both pooled clients ready",
      async () => clients(store!).every((c) => c.status === "ready"),
      5000,
    );

    const ended: string[] = [];
    for (const conn of clients(store)) conn.once("end", () => ended.push(conn.status));
    await Promise.all(clients(store).map((conn) => cutReconnectShort(conn)));
    await waitFor("ioredis to end both clients", async () => ended.length === 2, 5000);
    expect(ended).to.deep.equal(["end", "end"]);

    await waitFor(
      "both clients ready again",
      async () => clients(store!).every((c) => c.status === "ready"),
      10_000,
    );
    const key = `ended_${uniq()}`;
    const op = { key, addend: 1, expireSeconds: 60, perSecond: false };
    expect(await store.increment([op])).to.deep.equal([1]);
    expect(await store.increment([op])).to.deep.equal([2]);
  });
});
