import { expect } from "chai";
import { DeliveryEnv } from "../support/delivery-env.js";
import { Receiver } from "../support/receiver.js";
import { until } from "../support/until.js";
import { WipeableTemporal } from "../support/wipeable-temporal.js";

/**
 * Temporal loses its state while an ordered key's events wait behind a failing head:
 * reconciliation restarts the head from its attempt rows and the key's sequencer, which
 * takes the backlog up from its rows in order; a blocked key stays blocked.
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
    await until("the head's first failure", () => headCalls === 1, 90_000);
    const waiting = await env.api.call("GET", `/webhooks/${(await env.attempts(config.id))[0]!.webhook_id}`);
    expect(waiting.status).to.equal(200);
    await temporal.wipe();

    await until("every event", () => succeeded.length === 5, 90_000);
    expect(succeeded).to.deep.equal([1, 2, 3, 4, 5]);
    const received = receiver.requests.map((r) => seqOf(r.body));
    expect(received).to.deep.equal([1, 1, 1, 2, 3, 4, 5]);
  });

  it("keeps a blocked key blocked: its block is in its row, and a release after the loss lets it go on", async () => {
    const config = await env.createConfig({
      endpoint: receiver.url,
      eventTypes: ["ledger.ordered_wiped_blocked"],
      ordering: { enabled: true, onFailure: "block" },
    });
    const seqOf = (body: string) => (JSON.parse(body).payload as { seq: number }).seq;
    const posted: number[] = [];
    receiver.respond = (r, res) => {
      const seq = seqOf(r.body);
      posted.push(seq);
      res.writeHead(seq === 1 ? 400 : 200).end();
    };
    for (let seq = 1; seq <= 3; seq++) {
      const r = await env.api.call(
        "POST",
        "/events",
        env.event({
          type: "ordered_wiped_blocked",
          idempotency_key: `wiped-blocked-${seq}`,
          ordering_key: "b",
          payload: { seq },
        }),
      );
      expect(r.status, r.text).to.equal(202);
    }
    const blocked = async () =>
      (await env.api.call("GET", `/configs/${config.id}/ordering-keys?state=blocked`)).body.cursor.data as {
        orderingKey: string;
        queued: number;
      }[];
    await until("the key blocked", async () => (await blocked()).length === 1, 90_000);
    await temporal.wipe();
    // Reconciliation starts the key's sequencer again (its rows are past the grace): it
    // reads the block from the key's row and holds.
    await until("a sequencer running again", async () => {
      try {
        const d = await env.temporal.workflow.getHandle(`ordered:${config.id}:b`).describe();
        return d.status.name === "RUNNING";
      } catch {
        return false;
      }
    });
    await new Promise((r) => setTimeout(r, 2000));
    expect(posted).to.deep.equal([1]);
    expect((await blocked()).map((k) => [k.orderingKey, k.queued])).to.deep.equal([["b", 3]]);
    const skip = await env.api.call("POST", `/configs/${config.id}/ordering-keys/b/skip`);
    expect(skip.status, skip.text).to.equal(202);
    await until("the rest", () => posted.length === 3, 90_000);
    expect(posted).to.deep.equal([1, 2, 3]);
  });
});
