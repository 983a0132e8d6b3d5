import { expect } from "chai";
import { DeliveryEnv } from "../support/delivery-env.js";
import { Receiver } from "../support/receiver.js";
import { until } from "../support/until.js";
import { WipeableTemporal } from "../support/wipeable-temporal.js";

/** The events of one POST: a batch's array, or one event sent alone. */
const seqsOf = (body: string) => {
  const parsed = JSON.parse(body) as { payload: { seq: number } }[] | { payload: { seq: number } };
  return (Array.isArray(parsed) ? parsed : [parsed]).map((e) => e.payload.seq);
};

/**
 * Temporal loses its state while a batched ordered key's first batch waits for its retry and
 * later events wait in the key's queue: reconciliation restarts the batch's events (each alone,
 * from their attempt rows) and puts the waiting ones back after them, so the key's successes
 * stay in acceptance order.
 */
describe("ordered batched delivery after Temporal lost its state", function () {
  this.timeout(180_000);
  const env = new DeliveryEnv();
  const temporal = new WipeableTemporal();
  let receiver: Receiver;

  before(async () => {
    await temporal.start();
    await env.start(
      [
        ...["--min-backoff-delay", "3s", "--max-backoff-delay", "3s"],
        ...["--retry-period", "300ms", "--reconcile-grace", "1s", "--max-attempts", "10"],
      ],
      temporal.address,
    );
    receiver = await new Receiver().start();
  });
  after(async () => {
    await receiver?.stop();
    await env.stop();
    await temporal?.stop();
  });

  it("keeps the key's order: the restarted batch's events go before the waiting ones", async () => {
    await env.createConfig({
      endpoint: receiver.url,
      eventTypes: ["ledger.ordered_batch_wiped"],
      ordering: { enabled: true },
      batch: { maxEvents: 2, maxWaitMs: 5_000 },
    });
    let firstCalls = 0;
    const succeeded: number[] = [];
    receiver.respond = (r, res) => {
      const seqs = seqsOf(r.body);
      // POSTs carrying event 1 fail twice (its batch before the wipe, once after), then succeed.
      if (seqs.includes(1) && ++firstCalls <= 2) return void res.writeHead(503).end();
      succeeded.push(...seqs);
      res.writeHead(200).end();
    };
    for (let seq = 1; seq <= 5; seq++) {
      const r = await env.api.call(
        "POST",
        "/events",
        env.event({
          type: "ordered_batch_wiped",
          idempotency_key: `batch-wiped-${seq}`,
          ordering_key: "w",
          payload: { seq },
        }),
      );
      expect(r.status, r.text).to.equal(202);
    }
    // The batch of 1 and 2 waits for its retry; 3, 4 and 5 wait in the key's queue.
    await until("the first batch's failure", () => firstCalls === 1, 90_000);
    expect(seqsOf(receiver.requests[0]!.body)).to.deep.equal([1, 2]);
    await temporal.wipe();

    await until("every event", () => succeeded.length >= 5, 90_000);
    expect(succeeded).to.deep.equal([1, 2, 3, 4, 5]);
  });
});
