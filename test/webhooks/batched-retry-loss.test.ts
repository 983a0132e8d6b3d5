import { expect } from "chai";
import { DeliveryEnv } from "../support/delivery-env.js";
import { Receiver, signedWith } from "../support/receiver.js";
import { waitFor } from "../support/redis-servers.js";
import { WipeableTemporal } from "../support/wipeable-temporal.js";

/**
 * Temporal loses its state while a batch is being retried (its receiver answered 500): the
 * events' retry rows are found overdue by reconciliation, which restarts each event alone, as
 * a single delivery; each then arrives once more and ends with a success row.
 */
describe("a batch being retried when Temporal lost its state", function () {
  this.timeout(180_000);
  const env = new DeliveryEnv();
  const temporal = new WipeableTemporal();
  let receiver: Receiver;
  let failing = true;

  before(async () => {
    await temporal.start();
    await env.start(
      [
        "--retry-period",
        "300ms",
        "--reconcile-grace",
        "1s",
        "--min-backoff-delay",
        "3s",
        "--max-backoff-delay",
        "3s",
      ],
      temporal.address,
    );
    receiver = await new Receiver().start();
    receiver.respond = (_r, res) => res.writeHead(failing ? 500 : 200).end();
  });
  after(async () => {
    await receiver?.stop();
    await env.stop();
    await temporal?.stop();
  });

  it("restarts each event of the lost batch alone, and each ends delivered once", async () => {
    const config = await env.createConfig({
      endpoint: receiver.url,
      eventTypes: ["ledger.batch_retry_wiped"],
      batch: { maxEvents: 3, maxWaitMs: 200 },
    });
    const ids: string[] = [];
    for (let seq = 1; seq <= 3; seq++) {
      const r = await env.api.call(
        "POST",
        "/events",
        env.event({
          type: "batch_retry_wiped",
          idempotency_key: `batch-retry-wiped-${seq}`,
          payload: { seq },
        }),
      );
      expect(r.status, r.text).to.equal(202);
      ids.push(r.body.data.deliveries[0].webhookID);
    }
    // The batch's first POST failed: every event has a row saying it will be tried again.
    await waitFor(
      "the batch's failed attempt",
      async () => (await env.attempts(config.id)).length >= 3,
      30_000,
    );
    expect(receiver.requests).to.have.length(1);
    const batchId = String(receiver.requests[0]!.headers["svc-webhook-id"]);
    await temporal.wipe();
    failing = false;

    const resent = () => receiver.requests.slice(1);
    await waitFor("each event sent again", async () => resent().length >= 3, 90_000);
    await waitFor(
      "the success rows",
      async () => (await env.attempts(config.id)).filter((r) => r.status === "success").length >= 3,
      30_000,
    );
    // Alone: each body is one event (no array), under the event's own webhook id, no batch header.
    const sent = resent().map((r) => ({
      id: String(r.headers["svc-webhook-id"]),
      body: JSON.parse(r.body) as { payload: { seq: number } },
      batchIds: r.headers["svc-webhook-batch-ids"],
    }));
    expect(sent.map((s) => Array.isArray(s.body))).to.deep.equal([false, false, false]);
    expect(sent.map((s) => s.id).sort()).to.deep.equal([...ids].sort());
    expect(sent.map((s) => s.body.payload.seq).sort()).to.deep.equal([1, 2, 3]);
    expect(sent.every((s) => s.batchIds === undefined)).to.equal(true);
    expect(sent.some((s) => s.id === batchId)).to.equal(false);
    for (const r of resent()) expect(signedWith(config.secret, r)).to.equal(true);
    await new Promise((r) => setTimeout(r, 2_000));
    expect(resent(), "nothing sent twice").to.have.length(3);
    const rows = await env.attempts(config.id);
    for (const id of ids)
      expect(
        rows.filter((r) => r.webhook_id === id).map((r) => r.status),
        `rows of ${id}`,
      ).to.include("success");
  });
});
