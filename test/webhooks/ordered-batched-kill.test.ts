// tags: @long (over 45 s: among the first files the parallel suite starts)
import { expect } from "chai";
import { batchCarriers, waitForSuccessRows } from "../support/batch-receipts.js";
import { signedWith } from "../support/receiver.js";
import { KilledWorkerStack } from "../support/worker-process.js";

const KEYS = 20;
const PER_KEY = 50;
const EVENTS = KEYS * PER_KEY;

/**
 * 1 000 events over 20 ordering keys published at full speed on NATS to a batched ordered
 * config while the worker that consumes them and runs their workflows is killed -9 twice:
 * every event arrives, signed, in its key's order, and ends with a success row; no event is
 * ever put in two batches (an event POSTed twice was in the same batch both times: a batch
 * in flight at a kill, sent again whole).
 */
describe("ordered batched delivery survives a worker killed -9 twice", function () {
  this.timeout(300_000);
  const stack = new KilledWorkerStack("ordered-batched", [
    "--retry-period",
    "500ms",
    "--reconcile-grace",
    "2s",
    // A batch whose send died with its worker is tried again when its activity times out.
    "--send-timeout",
    "5s",
  ]);
  const receiver = () => stack.receiver;

  before(() => stack.start());
  after(() => stack.stop());

  /** Each event received, by its sequence number, with the batch ids of the POSTs that carried it. */
  const carriers = () => batchCarriers(receiver().requests);
  /** A key's events in the order they first arrived (its events are seq = key + KEYS * n). */
  const firstArrivals = (key: number) => {
    const seen: number[] = [];
    for (const r of receiver().requests)
      for (const e of JSON.parse(r.body) as { payload: { seq: number; key: number } }[])
        if (e.payload.key === key && !seen.includes(e.payload.seq)) seen.push(e.payload.seq);
    return seen;
  };

  it("delivers every event in its key's order whatever the kills cut off, each in one batch only and ending with a success row", async () => {
    const created = await stack.api.call("POST", "/configs", {
      endpoint: receiver().url,
      eventTypes: ["ledger.ordered_batched_kill"],
      ordering: { enabled: true },
      batch: { maxEvents: 50, maxWaitMs: 200 },
    });
    expect(created.status, created.text).to.equal(200);
    const config = created.body.data as { id: string; secret: string };

    await stack.publishAll(
      Array.from({ length: EVENTS }, (_, i) => ({
        idempotency_key: `obk-${i + 1}`,
        app: "ledger",
        type: "ORDERED_BATCHED_KILL",
        ordering_key: `key-${i % KEYS}`,
        payload: { seq: i + 1, key: i % KEYS },
      })),
    );

    for (const at of [150, 500]) {
      const end = Date.now() + 120_000;
      while (carriers().size < at) {
        if (Date.now() > end) throw new Error(`expected ${at} events received, got ${carriers().size}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      await stack.restartWorker();
    }

    const end = Date.now() + 120_000;
    while (carriers().size < EVENTS) {
      if (Date.now() > end) {
        const got = carriers();
        const lost = Array.from({ length: EVENTS }, (_, i) => i + 1).filter((s) => !got.has(s));
        throw new Error(`${lost.length} events never arrived, e.g. ${lost.slice(0, 10).join(", ")}`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    for (const r of receiver().requests) expect(signedWith(config.secret, r)).to.equal(true);
    for (const [seq, batches] of carriers())
      expect(new Set(batches).size, `batches that carried event ${seq}: ${batches.join(", ")}`).to.equal(1);
    for (let key = 0; key < KEYS; key++) {
      const inOrder = Array.from({ length: PER_KEY }, (_, n) => key + 1 + KEYS * n);
      if (JSON.stringify(firstArrivals(key)) !== JSON.stringify(inOrder))
        console.log(
          `key ${key} out of order; the workers said:\n${stack.workerLines(/unacknowledged|handling failed/).join("\n")}`,
        );
      expect(firstArrivals(key), `key ${key}`).to.deep.equal(inOrder);
    }

    // Every event's delivery ends with one success row.
    await waitForSuccessRows(stack.api.db.url, config.id, EVENTS);
  });
});
