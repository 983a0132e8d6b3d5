import { expect } from "chai";
import { DeliveryEnv } from "../support/delivery-env.js";
import { Receiver } from "../support/receiver.js";
import { WipeableTemporal } from "../support/wipeable-temporal.js";

/**
 * Temporal loses its state while an ordered key's events wait behind a failing head:
 * reconciliation puts the head back first (from its attempt rows, through the key's
 * queue) and the waiting events after it, in the order they were accepted.
 */
describe("ordered delivery after Temporal lost its state", function () {
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

  const until = async (what: string, ok: () => boolean | Promise<boolean>) => {
    const end = Date.now() + 90_000;
    while (!(await ok())) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  it("restores the key's order: no later event overtakes the head", async () => {
    const config = await env.createConfig({
      endpoint: receiver.url,
      eventTypes: ["ledger.ordered_wiped"],
      ordering: { enabled: true },
    });
    const seqOf = (body: string) => (JSON.parse(body).payload as { seq: number }).seq;
    let headCalls = 0;
    const succeeded: number[] = [];
    receiver.respond = (r, res) => {
      const seq = seqOf(r.body);
      // The head fails twice (once before the wipe, once after), then succeeds.
      if (seq === 1 && ++headCalls <= 2) return void res.writeHead(503).end();
      succeeded.push(seq);
      res.writeHead(200).end();
    };
    for (let seq = 1; seq <= 5; seq++) {
      const r = await env.api.call(
        "POST",
        "/events",
        env.event({
          type: "ordered_wiped",
          idempotency_key: `wiped-${seq}`,
          ordering_key: "w",
          payload: { seq },
        }),
      );
      expect(r.status, r.text).to.equal(202);
    }
    // The head waits for its retry; the four others wait in the key's queue, each with its row.
    await until("the head's first failure", () => headCalls === 1);
    const waiting = await env.api.call("GET", `/webhooks/${(await env.attempts(config.id))[0]!.webhook_id}`);
    expect(waiting.status).to.equal(200);
    await temporal.wipe();

    await until("every event", () => succeeded.length === 5);
    expect(succeeded).to.deep.equal([1, 2, 3, 4, 5]);
    const received = receiver.requests.map((r) => seqOf(r.body));
    expect(received).to.deep.equal([1, 1, 1, 2, 3, 4, 5]);
  });
});
