import { expect } from "chai";
import { DeliveryEnv } from "../support/delivery-env.js";
import { Receiver, signedWith } from "../support/receiver.js";
import { waitFor } from "../support/redis-servers.js";
import { WipeableTemporal } from "../support/wipeable-temporal.js";

/**
 * Temporal loses its state while a batched config's collector holds events: their waiting
 * rows are found overdue by reconciliation, which puts them back in a new collector; each
 * event then arrives once.
 */
describe("batched delivery after Temporal lost its state", function () {
  this.timeout(180_000);
  const env = new DeliveryEnv();
  const temporal = new WipeableTemporal();
  let receiver: Receiver;

  before(async () => {
    await temporal.start();
    await env.start(["--retry-period", "300ms", "--reconcile-grace", "1s"], temporal.address);
    receiver = await new Receiver().start();
  });
  after(async () => {
    await receiver?.stop();
    await env.stop();
    await temporal?.stop();
  });

  it("puts the collected events back in a new collector, and sends each once", async () => {
    const config = await env.createConfig({
      endpoint: receiver.url,
      eventTypes: ["ledger.batch_wiped"],
      batch: { maxEvents: 50, maxWaitMs: 10_000 },
    });
    const ids: string[] = [];
    for (let seq = 1; seq <= 3; seq++) {
      const r = await env.api.call(
        "POST",
        "/events",
        env.event({ type: "batch_wiped", idempotency_key: `batch-wiped-${seq}`, payload: { seq } }),
      );
      expect(r.status, r.text).to.equal(202);
      ids.push(r.body.data.deliveries[0].webhookID);
    }
    // Lost before the batch went (it waits 10 s for more events).
    await temporal.wipe();
    expect(receiver.requests).to.have.length(0);

    const seqs = () =>
      receiver.requests.flatMap((r) =>
        (JSON.parse(r.body) as { payload: { seq: number } }[]).map((e) => e.payload.seq),
      );
    await waitFor("the restored batch", async () => seqs().length >= 3, 90_000);
    await waitFor("the success rows", async () => (await env.attempts(config.id)).length >= 3, 30_000);
    expect(seqs().sort()).to.deep.equal([1, 2, 3]);
    for (const r of receiver.requests) expect(signedWith(config.secret, r)).to.equal(true);
    const rows = await env.attempts(config.id);
    expect(rows.map((r) => r.webhook_id).sort()).to.deep.equal([...ids].sort());
    expect(rows.every((r) => r.status === "success")).to.equal(true);
  });
});
