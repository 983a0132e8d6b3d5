import { expect } from "chai";
import { metric, sql } from "../support/poison.js";
import { startWebhooks, type WebhooksUnderTest } from "../support/webhooks-server.js";
import {
  bigListFilter,
  largestListEvent,
  largestTextEvent,
  manyRegexFilter,
  oneHugeRegexFilter,
  typicalEvent,
} from "../support/worst-filters.js";

/**
 * On the real stack (webhooks serve, PostgreSQL, Temporal): a
 * tenant whose configs hold the costliest filters the checker used to accept, stored
 * before the write-time limits existed (by SQL here), sends the largest events while
 * another tenant sends small ones. The other tenant's latency is compared with a
 * reference measured in the same run, with the same large events behind a cheap
 * filter: what is left is the filters' own cost.
 */
describe("payload filter bounds: one tenant's costly filters beside another tenant's events", function () {
  this.timeout(300_000);
  /** How much slower the quiet tenant may be with the worst filters than with cheap ones. */
  const RATIO = 3;
  /** Large events the noisy tenant sends per phase, and how many at once. */
  const NOISY = 6;
  const NOISY_AT_ONCE = 3;

  let api: WebhooksUnderTest;
  let stalled = false;
  let noisyConfigs: string[] = [];

  before(async () => {
    api = await startWebhooks();
    const tenant = async (uid: string) => {
      const r = await api.call("POST", "/tenants", { uid });
      expect(r.status, r.text).to.equal(200);
      return r.body.data.id as string;
    };
    const noisy = await tenant("noisy");
    const quiet = await tenant("quiet");
    const config = async (tenantId: string) => {
      const r = await api.call("POST", "/configs", {
        endpoint: "http://127.0.0.1:9/hook",
        eventTypes: ["costly.*"],
        tenantId,
      });
      expect(r.status, r.text).to.equal(200);
      return r.body.data.id as string;
    };
    await config(quiet);
    noisyConfigs = [await config(noisy), await config(noisy), await config(noisy)];
  });

  after(async () => {
    // A process stuck in a filter never reads its SIGTERM.
    if (stalled) await api?.process.stop("SIGKILL");
    await api?.stop();
  });

  /** Sets the noisy tenant's filters as stored rows (as filters written before the limits are). */
  const storeFilters = async (filters: unknown[]) => {
    for (const [i, id] of noisyConfigs.entries()) {
      await sql(api, "UPDATE configs SET filter = $2::jsonb WHERE id = $1", [id, JSON.stringify(filters[i])]);
    }
  };

  const post = async (body: unknown, signal?: AbortSignal) => {
    const start = performance.now();
    const res = await fetch(`${api.url}/events`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
      ...(signal ? { signal } : {}),
    });
    // biome-ignore lint/suspicious/noExplicitAny: answers are inspected field by field
    const answer: any = await res.json();
    return { status: res.status, answer, ms: performance.now() - start };
  };

  /**
   * The noisy tenant sends NOISY large events, NOISY_AT_ONCE at a time, while the quiet
   * tenant sends one small event after another; returns the quiet latencies (Infinity
   * for one not answered within `quietTimeoutMs`) and the noisy answers.
   */
  const phase = async (name: string, quietTimeoutMs: number) => {
    const stop = new AbortController();
    const noisyAnswers: Awaited<ReturnType<typeof post>>[] = [];
    let sent = 0;
    const noisyLane = async () => {
      while (sent < NOISY) {
        const i = sent++;
        const event =
          i % 2 ? largestListEvent(`${name}-n${i}`, "noisy") : largestTextEvent(`${name}-n${i}`, "noisy");
        noisyAnswers.push(await post(event, stop.signal));
      }
    };
    const noisy = Promise.allSettled(Array.from({ length: NOISY_AT_ONCE }, noisyLane));
    let noisyDone = false;
    void noisy.then(() => {
      noisyDone = true;
    });
    const quiet: number[] = [];
    try {
      // At least 20 quiet events, and as many as the noisy tenant's events take.
      for (let i = 0; (!noisyDone || i < 20) && i < 400; i++) {
        try {
          const signal = AbortSignal.timeout(Math.ceil(quietTimeoutMs));
          const r = await post(typicalEvent(`${name}-q${i}`, "quiet"), signal);
          expect(r.status, JSON.stringify(r.answer)).to.equal(202);
          expect(r.answer.data.configs).to.equal(1);
          quiet.push(r.ms);
        } catch (err) {
          if ((err as Error).name !== "TimeoutError") throw err;
          quiet.push(Number.POSITIVE_INFINITY);
          break;
        }
      }
    } finally {
      if (!noisyDone) {
        stalled = true;
        stop.abort();
      }
      await noisy;
    }
    return { quiet, noisyAnswers };
  };

  const pct = (xs: number[], q: number) => {
    const s = [...xs].sort((a, b) => a - b);
    return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
  };

  it("refuses the worst filters on write with 400 naming the field, while stored ones keep running", async () => {
    const cases: [unknown, string][] = [
      [
        manyRegexFilter(),
        'filter.$or[0]["payload.text"].$regex repeats 999 times ({999}); a counted repetition may count at most 100',
      ],
      [
        oneHugeRegexFilter(),
        'filter["payload.text"].$regex is 12589 characters long; a pattern may have at most 256',
      ],
      [bigListFilter(), 'filter.$or[0]["payload.list"].$in has 1000 values; a list may have at most 256'],
    ];
    for (const [filter, words] of cases) {
      const r = await api.call("POST", "/configs", {
        endpoint: "http://127.0.0.1:9/hook",
        eventTypes: ["costly.*"],
        filter,
      });
      expect(r.status, r.text).to.equal(400);
      expect(r.body).to.deep.include({ errorCode: "VALIDATION", errorMessage: words });
    }
  });

  it("keeps another tenant's latency (median, max) within 3x of the same load behind cheap filters, and records the budget", async () => {
    // Reference: the same large events, the noisy configs' filters cheap and passing the
    // same events as the worst ones do (the third passes text events, none list events),
    // so both phases store and start the same.
    const cheap = { "payload.absent": true };
    await storeFilters([cheap, cheap, { "payload.list": { $nin: [5] } }]);
    const reference = await phase("ref", 120_000);
    expect(reference.noisyAnswers.every((a) => a.status === 202 || a.status === 200)).to.equal(true);
    const refP50 = pct(reference.quiet, 0.5);
    const refP95 = pct(reference.quiet, 0.95);

    await storeFilters([manyRegexFilter(), oneHugeRegexFilter(), bigListFilter()]);
    const budgetBefore = await metric(api, "webhooks_events_filtered_total", { reason: "budget" });
    const worst = await phase("worst", RATIO * Math.max(...reference.quiet));
    const p50 = pct(worst.quiet, 0.5);
    const p95 = pct(worst.quiet, 0.95);
    const max = Math.max(...worst.quiet);
    const refMax = Math.max(...reference.quiet);
    const summary =
      `quiet tenant ms: reference p50 ${refP50.toFixed(1)} p95 ${refP95.toFixed(1)} max ${Math.max(...reference.quiet).toFixed(1)} (n=${reference.quiet.length}); ` +
      `worst filters p50 ${p50.toFixed(1)} p95 ${p95.toFixed(1)} max ${Math.max(...worst.quiet).toFixed(1)} (n=${worst.quiet.length}); ` +
      `noisy events answered: ${worst.noisyAnswers.length} of ${NOISY}`;
    console.log(`      ${summary}`);
    expect(stalled, `the noisy tenant's events stalled the process: ${summary}`).to.equal(false);
    expect(p50, summary).to.be.at.most(RATIO * refP50);
    expect(max, summary).to.be.at.most(RATIO * refMax);

    // Text events: both regex filters over budget, which spends the event's budget, so the
    // list filter (which would pass: $nin on a missing field) runs only when its config
    // comes first. List events: the list filter over budget (10^5 elements, a step or two
    // each even hashed), the regex filters do not match (no text).
    expect(worst.noisyAnswers).to.have.length(NOISY);
    for (const a of worst.noisyAnswers) {
      expect(a.status, JSON.stringify(a.answer)).to.be.oneOf([200, 202]);
      const d = a.answer.data;
      expect(d.configs + d.filtered, JSON.stringify(d)).to.equal(3);
      if (d.overBudget < 2)
        expect(d, "a list event").to.deep.include({ configs: 0, filtered: 3, overBudget: 1 });
    }
    const textAnswers = worst.noisyAnswers.filter((a) => a.answer.data.overBudget >= 2);
    expect(textAnswers, "text events: two or three over budget").to.have.length(NOISY / 2);
    const over = worst.noisyAnswers.reduce((n, a) => n + a.answer.data.overBudget, 0);
    const budgetAfter = await metric(api, "webhooks_events_filtered_total", { reason: "budget" });
    expect(budgetAfter - budgetBefore).to.equal(over);
  });
});
