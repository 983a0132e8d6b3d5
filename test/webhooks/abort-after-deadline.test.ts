import { expect } from "chai";
import { DeliveryEnv } from "../support/delivery-env.js";
import { Receiver } from "../support/receiver.js";

/**
 * A retry scheduled at the abort-after deadline itself (the receiver asked for a later
 * Retry-After, which the deadline cuts short) is sent: the caps apply when the retry was
 * due, not when its timer's task got to run a few milliseconds later.
 */
describe("a retry due exactly at the abort-after deadline", function () {
  this.timeout(60_000);
  const env = new DeliveryEnv();
  let receiver: Receiver;

  before(async () => {
    receiver = await new Receiver().start();
    receiver.respond = (_req, res) => {
      if (receiver.requests.length === 1) res.writeHead(503, { "retry-after": "30" }).end();
      else res.writeHead(200).end();
    };
    await env.start(["--abort-after", "3s"]);
  });
  after(async () => {
    await receiver?.stop();
    await env.stop();
  });

  it("is sent, not refused for the deadline it was scheduled at", async () => {
    const config = await env.createConfig({ endpoint: receiver.url });
    const event = env.event();
    await env.publish(event);
    const result = await env.result(config.id, event.idempotency_key);
    expect(result, JSON.stringify(result)).to.include({ status: "success", attempts: 2 });
    expect(receiver.requests).to.have.length(2);
    const [first, second] = receiver.requests;
    // Scheduled at the deadline: 3 s after the first attempt, not the 30 s asked for.
    expect(second!.at - first!.at).to.be.within(2500, 10_000);
  });
});
