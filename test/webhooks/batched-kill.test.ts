// tags: @long (over 45 s: among the first files the parallel suite starts)
import { expect } from "chai";
import { batchCarriers, waitForSuccessRows } from "../support/batch-receipts.js";
import { signedWith } from "../support/receiver.js";
import { KilledWorkerStack } from "../support/worker-process.js";

const EVENTS = 1000;

/**
 * 1 000 events published at full speed on NATS to a batched config while the worker that
 * consumes them and runs their workflows is killed -9 twice: every event arrives, signed,
 * and ends with a success row, and no event is ever put in two batches (an event POSTed
 * twice was in the same batch both times: a batch in flight at a kill, sent again whole).
 */
describe("batched delivery survives a worker killed -9 twice", function () {
  this.timeout(300_000);
  const stack = new KilledWorkerStack("batched", [
    "--retry-period",
    "500ms",
    "--reconcile-grace",
    "2s",
    // A batch whose send died with its worker is tried again when its activity times out.
    "--send-timeout",
    "5s",
  ]);

  before(() => stack.start());
  after(() => stack.stop());

  /** Each event received, by its sequence number, with the batch ids of the POSTs that carried it. */
  const carriers = () => batchCarriers(stack.receiver.requests);

  it("delivers every event whatever the kills cut off, each in one batch only and ending with a success row", async () => {
    const created = await stack.api.call("POST", "/configs", {
      endpoint: stack.receiver.url,
      eventTypes: ["ledger.batched_kill"],
      batch: { maxEvents: 50, maxWaitMs: 200 },
    });
    expect(created.status, created.text).to.equal(200);
    const config = created.body.data as { id: string; secret: string };

    await stack.publishAll(
      Array.from({ length: EVENTS }, (_, i) => ({
        idempotency_key: `bk-${i + 1}`,
        app: "ledger",
        type: "BATCHED_KILL",
        payload: { seq: i + 1 },
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
    for (const r of stack.receiver.requests) expect(signedWith(config.secret, r)).to.equal(true);
    for (const [seq, batches] of carriers())
      expect(new Set(batches).size, `batches that carried event ${seq}: ${batches.join(", ")}`).to.equal(1);

    // Every event's delivery ends with one success row.
    await waitForSuccessRows(stack.api.db.url, config.id, EVENTS);
  });
});
