import { expect } from "chai";
import { backoffDelay, classify, decide, parseRetryAfter } from "../../activities/delivery-policy.js";
import type { DeliveryPolicy } from "../../activities/delivery-types.js";
import { parseDuration } from "../../common/duration.js";

const DEFAULTS: DeliveryPolicy = {
  minBackoffMs: parseDuration("1m"),
  maxBackoffMs: parseDuration("1h"),
  abortAfterMs: parseDuration("10h"),
  maxAttempts: 15,
};

describe("delivery policy", () => {
  it("with the production defaults, 15 attempts end about 9 h 3 min after the first", () => {
    const first = new Date("2026-01-01T00:00:00Z");
    let now = first;
    const sends: Date[] = [];
    for (let retryAttempt = 0; ; retryAttempt++) {
      sends.push(now);
      const d = decide({ statusCode: 503, retryAttempt, policy: DEFAULTS, firstAttemptAt: first, now });
      if (d.status !== "to retry") {
        expect(d).to.deep.include({ status: "failed", reason: "max attempts (15) reached" });
        break;
      }
      now = d.nextRetryAfter!;
    }
    expect(sends).to.have.length(15);
    expect(sends.at(-1)!.getTime() - first.getTime()).to.equal(parseDuration("9h3m"));
  });

  it("doubles from the first delay up to the cap, without jitter", () => {
    expect([0, 1, 2, 5, 6, 7, 14].map((n) => backoffDelay(DEFAULTS, n) / 60_000)).to.deep.equal([
      1, 2, 4, 32, 60, 60, 60,
    ]);
  });

  it("classifies answers as the spec does", () => {
    expect([200, 204, 299].map(classify)).to.deep.equal(["success", "success", "success"]);
    expect([400, 401, 404, 410, 422].map(classify)).to.deep.equal(Array(5).fill("permanent"));
    expect([0, 301, 408, 429, 500, 503].map(classify)).to.deep.equal(Array(6).fill("retryable"));
  });

  it("honours Retry-After beyond the backoff but never past the abort-after window", () => {
    const first = new Date("2026-01-01T00:00:00Z");
    const now = new Date(first.getTime() + parseDuration("9h"));
    const later = decide({
      statusCode: 429,
      retryAttempt: 1,
      policy: DEFAULTS,
      firstAttemptAt: first,
      now,
      retryAfterMs: 300_000,
    });
    expect(later.nextRetryAfter!.getTime() - now.getTime()).to.equal(300_000);
    const capped = decide({
      statusCode: 429,
      retryAttempt: 1,
      policy: DEFAULTS,
      firstAttemptAt: first,
      now,
      retryAfterMs: parseDuration("6h"),
    });
    expect(capped.nextRetryAfter!.getTime()).to.equal(first.getTime() + DEFAULTS.abortAfterMs);
    const exhausted = decide({
      statusCode: 500,
      retryAttempt: 10,
      policy: DEFAULTS,
      firstAttemptAt: first,
      now: new Date(first.getTime() + parseDuration("9h30m")),
    });
    expect(exhausted).to.deep.include({ status: "failed", reason: "abort-after window exhausted" });
  });

  it("reads Retry-After as seconds or an HTTP date", () => {
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(parseRetryAfter("120", now)).to.equal(120_000);
    expect(parseRetryAfter("Thu, 01 Jan 2026 00:01:00 GMT", now)).to.equal(60_000);
    expect(parseRetryAfter("soon", now)).to.equal(undefined);
    expect(parseRetryAfter(undefined, now)).to.equal(undefined);
  });
});
