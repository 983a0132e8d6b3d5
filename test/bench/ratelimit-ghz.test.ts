// The bench's ghz generator: reading ghz's JSON report into latencies, failures and the
// run's span. (ghz itself is built only for benchmarks: scripts/ghz.sh.)

import { expect } from "chai";
import { parseGhzReport } from "../../bench/ratelimit/ghz.js";

const at = (ms: number) => new Date(Date.UTC(2026, 10, 25, 12, 0, 0, ms)).toISOString();
const call = (startMs: number, latencyMs: number, status: string) => ({
  timestamp: at(startMs),
  latency: latencyMs * 1e6,
  status,
});

describe("ratelimit bench: ghz generator", () => {
  it("takes the OK calls' durations, sorted, and spans first to last start", () => {
    const r = parseGhzReport({ details: [call(0, 3, "OK"), call(500, 1, "OK"), call(1000, 2, "OK")] });
    expect([...r.latenciesMs]).to.deep.equal([1, 2, 3]);
    expect(r.failed).to.equal(0);
    expect(r.seconds).to.equal(1);
  });

  it("counts gRPC errors as failures, but not the calls ghz itself cut off at the end", () => {
    const r = parseGhzReport({
      details: [
        call(0, 1, "OK"),
        call(100, 5, "Unavailable"), // during the run: the service failed it
        call(200, 2, "Unknown"),
        call(1000, 1, "OK"),
        call(1000, 2, "Canceled"), // the run ended
        call(1001, 1, "Unavailable"), // transport closing as the run ended
      ],
    });
    expect([...r.latenciesMs]).to.deep.equal([1, 1]);
    expect(r.failed).to.equal(2);
  });

  it("reads an empty report as no calls", () => {
    const r = parseGhzReport({});
    expect(r.latenciesMs.length).to.equal(0);
    expect(r.failed).to.equal(0);
    expect(r.seconds).to.equal(0);
  });
});
