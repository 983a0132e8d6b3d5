import { expect } from "chai";
import { SEND_OVERHEAD_MS } from "../../activities/send-budget.js";
import { DeliveryEnv } from "../support/delivery-env.js";
import { Receiver } from "../support/receiver.js";

/**
 * Issue 34 point 6: the send activity's start-to-close timeout follows --send-timeout
 * (activities/send-budget.ts). It was a fixed 2 minutes: with a send timeout near that,
 * Temporal retried a send whose POST was still open, and the receiver got it twice.
 */
describe("the send activity's timeout follows --send-timeout", function () {
  this.timeout(120_000);
  const env = new DeliveryEnv();
  const receiver = new Receiver();

  before(async () => {
    await receiver.start();
    // Queue mode: every send is an activity on the sends queue with that timeout.
    await env.start(["--send-mode", "queue", "--send-timeout", "2m"]);
  });
  after(async () => {
    await env.stop();
    await receiver.stop();
  });

  it("schedules each send with --send-timeout plus the bounded overhead (2m → 180 s), heartbeat 20 s", async () => {
    const config = await env.createConfig({ endpoint: receiver.url });
    const event = env.event();
    await env.publish(event);
    expect(await env.result(config.id, event.idempotency_key)).to.include({ status: "success" });

    const history = await env.temporal.workflow
      .getHandle(env.workflowId(config.id, event.idempotency_key))
      .fetchHistory();
    const sends = (history.events ?? [])
      .map((e) => e.activityTaskScheduledEventAttributes)
      .filter((a) => a?.activityType?.name === "sendAttempt");
    expect(sends).to.have.length(1);
    const seconds = (d: { seconds?: unknown } | null | undefined) => Number(d?.seconds ?? 0);
    expect(seconds(sends[0]!.startToCloseTimeout)).to.equal((120_000 + SEND_OVERHEAD_MS) / 1000);
    expect(seconds(sends[0]!.heartbeatTimeout)).to.equal(20);
    // The POST's own timeout is the flag's: the send carries it in its policy.
    const input = JSON.parse(Buffer.from(sends[0]!.input!.payloads![0]!.data!).toString("utf8"));
    expect(input.policy.sendTimeoutMs).to.equal(120_000);
  });
});
