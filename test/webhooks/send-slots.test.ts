import { expect } from "chai";
import { DeliveryEnv } from "../support/delivery-env.js";
import { Receiver } from "../support/receiver.js";
import { until } from "../support/until.js";

/**
 * A config's maxConcurrency (activities/send-slots.ts): its receiver never has more POSTs
 * open than the cap, whatever the burst, every delivery still arrives once, and a send
 * that found the slots taken waits visibly ("waiting for a send slot").
 */
describe("maxConcurrency: a config's sends in flight", function () {
  this.timeout(180_000);
  const env = new DeliveryEnv();
  const receiver = new Receiver();
  let open = 0;
  let most = 0;

  before(async () => {
    await receiver.start();
    // Each POST is held 400 ms: a burst of 12 keeps every slot busy.
    receiver.respond = (_req, res) => {
      open++;
      most = Math.max(most, open);
      setTimeout(() => {
        open--;
        res.writeHead(200).end();
      }, 400);
    };
    await env.start(["--local-send-budget", "1s"]);
  });
  after(async () => {
    await receiver.stop();
    await env.stop();
  });

  it("never has more POSTs open than the cap, and delivers every event once", async () => {
    const config = await env.createConfig({ endpoint: receiver.url, maxConcurrency: 2 });
    const read = await env.api.call("GET", `/configs/${config.id}`);
    expect(read.body.data.maxConcurrency).to.equal(2);
    const events = Array.from({ length: 12 }, () => env.event());
    const waits: string[] = [];
    await Promise.all(events.map((e) => env.publish(e)));
    // A first send that found the slots taken waits in its unsent row, with the reason.
    await until("a send waiting for its slot", async () => {
      const rows = await env.query<{ reason: string }>(
        "SELECT reason FROM unsent_deliveries WHERE config_id = $1 AND reason LIKE 'waiting for a send slot%'",
        [config.id],
      );
      waits.push(...rows.map((r) => r.reason));
      return rows.length > 0;
    });
    expect(waits[0]).to.equal("waiting for a send slot (maxConcurrency 2)");
    for (const e of events)
      expect((await env.result(config.id, e.idempotency_key, 90_000)).status).to.equal("success");
    expect(most, "POSTs open at once").to.equal(2);
    const rows = await env.attempts(config.id);
    expect(rows.map((r) => r.status)).to.deep.equal(events.map(() => "success"));
    expect(receiver.requests).to.have.length(events.length);
    const metrics = await (await fetch(`${env.api.url}/metrics`)).text();
    expect(Number(/^webhooks_sends_waiting_for_slot_total (\d+)/m.exec(metrics)?.[1] ?? 0)).to.be.above(0);
  });

  it("takes the cap off with null, keeps it when absent, and refuses a cap below 1 naming the field", async () => {
    const config = await env.createConfig({ endpoint: receiver.url, maxConcurrency: 3 });
    const put = (body: Record<string, unknown>) =>
      env.api.call("PUT", `/configs/${config.id}`, {
        endpoint: receiver.url,
        eventTypes: ["ledger.committed_transactions"],
        ...body,
      });
    expect((await put({})).body.data.maxConcurrency).to.equal(3);
    expect((await put({ maxConcurrency: null })).body.data).to.not.have.property("maxConcurrency");
    const refused = await put({ maxConcurrency: 0 });
    expect(refused.status).to.equal(400);
    expect(refused.text).to.match(/maxConcurrency/);
  });
});
