import * as grpc from "@grpc/grpc-js";
import { expect } from "chai";
import { GrpcFloorService } from "../../bench/ratelimit/grpc-floor.js";
import {
  type RateLimitResponse,
  RateLimitResponse_Code,
  RateLimitServiceClient,
} from "../../proto/gen/envoy/service/ratelimit/v3/rls.js";

// The grpc-js floor the rate limit bench compares every closed-loop run with.
describe("bench/ratelimit grpc-js floor", function () {
  this.timeout(30_000);
  const floor = new GrpcFloorService();
  let client: InstanceType<typeof RateLimitServiceClient>;
  before(async () => {
    await floor.ready();
    client = new RateLimitServiceClient(floor.address, grpc.credentials.createInsecure());
  });
  after(async () => {
    client?.close();
    await floor.stop();
  });

  it("answers ShouldRateLimit with one OK status per descriptor, as the service's answers are shaped", async () => {
    const descriptors = ["k1", "k2", "k3"].map((key) => ({
      entries: [{ key, value: "u1" }],
      limit: undefined,
      hitsAddend: undefined,
    }));
    const res = await new Promise<RateLimitResponse>((resolve, reject) =>
      client.shouldRateLimit({ domain: "bench", descriptors, hitsAddend: 0 }, (err, r) =>
        err ? reject(err) : resolve(r),
      ),
    );
    expect(res.overallCode).to.equal(RateLimitResponse_Code.OK);
    expect(res.statuses).to.have.length(3);
    for (const s of res.statuses) {
      expect(s.code).to.equal(RateLimitResponse_Code.OK);
      expect(s.currentLimit?.requestsPerUnit).to.be.greaterThan(0);
      expect(Number(s.durationUntilReset?.seconds)).to.be.greaterThan(0);
    }
    expect(floor.pids()).to.have.length(1);
  });
});
