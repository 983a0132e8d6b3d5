import { expect } from "chai";
import { DeliveryEnv } from "../support/delivery-env.js";
import { type RateLimitUnderTest, startRateLimitService } from "../support/ratelimit-service.js";
import { Receiver } from "../support/receiver.js";
import { waitFor } from "../support/redis-servers.js";

const RULES = `domain: webhooks
descriptors:
  - key: config_id
    rate_limit: { unit: second, requests_per_unit: 1 }
  - key: tenant_id
    descriptors:
      - key: endpoint_host
        rate_limit: { unit: second, requests_per_unit: 100 }
`;

/**
 * A batched config's POSTs through the real rate limit service (docs/webhooks/ordering-and-batching.md#batched-delivery):
 * a batch asks once and counts one hit, whatever its events, and waits without a row.
 */
describe("batched delivery through the rate limit service", function () {
  this.timeout(120_000);
  let ratelimit: RateLimitUnderTest;
  let receiver: Receiver;
  const env = new DeliveryEnv();

  before(async () => {
    ratelimit = await startRateLimitService(RULES);
    receiver = await new Receiver().start();
    await env.start(["--ratelimit-addr", ratelimit.grpcAddress]);
  });
  after(async () => {
    await env.stop();
    await receiver?.stop();
    await ratelimit?.stop();
  });

  const hits = async (key: string) =>
    (await ratelimit.stats())[`ratelimit.service.rate_limit.webhooks.${key}.total_hits`] ?? 0;

  it("sends one batch a second under a limit of one request a second, one hit per POST", async () => {
    const config = await env.createConfig({
      endpoint: receiver.url,
      eventTypes: ["ledger.batch_limited"],
      batch: { maxEvents: 3, maxWaitMs: 5_000 },
    });
    const [configHits, hostHits] = [await hits("config_id"), await hits("tenant_id.endpoint_host")];
    // Nine events at once: three full batches, each larger than the limit's one request.
    const answers = await Promise.all(
      Array.from({ length: 9 }, (_, i) =>
        env.api.call(
          "POST",
          "/events",
          env.event({ type: "batch_limited", idempotency_key: `batch-limited-${i}`, payload: { i } }),
        ),
      ),
    );
    for (const a of answers) expect(a.status, a.text).to.equal(202);
    await waitFor("every success row", async () => (await env.attempts(config.id)).length === 9, 60_000);
    const events = receiver.requests.flatMap((r) =>
      (JSON.parse(r.body) as { payload: { i: number } }[]).map((e) => e.payload.i),
    );
    expect(events.sort((a, b) => a - b)).to.deep.equal([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    expect(receiver.requests).to.have.length(3);
    // Each POST landed in a second of its own, and only the POSTs counted (waits are peeks).
    const seconds = receiver.requests.map((r) => Math.floor(r.at / 1000));
    expect(new Set(seconds).size, `receipts in seconds ${seconds}`).to.equal(3);
    expect(await hits("config_id")).to.equal(configHits + 3);
    expect(await hits("tenant_id.endpoint_host")).to.equal(hostHits + 3);
    // Waiting wrote no row: one success row per event, its first attempt.
    const rows = await env.attempts(config.id);
    expect(rows.map((r) => [r.retry_attempt, r.status])).to.deep.equal(rows.map(() => [0, "success"]));
  });
});
