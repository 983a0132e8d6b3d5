import { expect } from "chai";
import {
  enterLane,
  HOLD_MARGIN_MS,
  LaneHeld,
  type LaneOf,
  type Redelivered,
} from "../../workers/ordered-lanes.js";

const BACK: Redelivered = { delayMs: 5_000, last: false };

/** One event's pass through its key's lane: "handed over", "held" or "failed" (the hand-over itself failed). */
async function pass(
  key: string | LaneOf,
  eventKey: string,
  outcome: "ok" | "fail",
  /** null: the failure goes back to the caller (the API). */
  redelivered: Redelivered | null = BACK,
): Promise<string> {
  const lane = enterLane(
    typeof key === "string" ? { orderingKey: key } : key,
    eventKey,
    redelivered ?? undefined,
  );
  try {
    await lane.turn;
    if (outcome === "fail") {
      lane.failed();
      return "failed";
    }
    return "handed over";
  } catch (err) {
    expect(err).to.be.instanceOf(LaneHeld);
    lane.failed();
    return "held";
  } finally {
    lane.leave();
  }
}

/**
 * The lanes of workers/ordered-lanes.ts: an event whose hand-over failed comes back later,
 * and no later event of its key may be handed over before it.
 */
describe("ordered lanes: a failed hand-over holds its key until it comes back", () => {
  it("holds the later events of the key, then lets them go in arrival order", async () => {
    const key = "lane-order";
    expect(await pass(key, "e1", "fail")).to.equal("failed");
    expect(await pass(key, "e2", "ok")).to.equal("held");
    expect(await pass(key, "e3", "ok")).to.equal("held");
    // Another key is not held.
    expect(await pass("lane-other", "x1", "ok")).to.equal("handed over");
    // A held event that comes back before the first one stays held.
    expect(await pass(key, "e2", "ok")).to.equal("held");
    expect(await pass(key, "e1", "ok")).to.equal("handed over");
    // A new event arriving before the held ones came back waits behind them.
    expect(await pass(key, "e4", "ok")).to.equal("held");
    expect(await pass(key, "e2", "ok")).to.equal("handed over");
    expect(await pass(key, "e3", "ok")).to.equal("handed over");
    expect(await pass(key, "e4", "ok")).to.equal("handed over");
    expect(await pass(key, "e5", "ok")).to.equal("handed over");
  });

  it("keeps the first failed event first when it fails again", async () => {
    const key = "lane-again";
    await pass(key, "a1", "fail");
    expect(await pass(key, "a2", "ok")).to.equal("held");
    expect(await pass(key, "a1", "fail")).to.equal("failed");
    expect(await pass(key, "a2", "ok")).to.equal("held");
    expect(await pass(key, "a1", "ok")).to.equal("handed over");
    expect(await pass(key, "a2", "ok")).to.equal("handed over");
  });

  it("lets the key go when the failed event will not come back (its last delivery)", async () => {
    const key = "lane-last";
    await pass(key, "d1", "fail", { delayMs: 5_000, last: true });
    expect(await pass(key, "d2", "ok")).to.equal("handed over");
  });

  it("lets the key go once the hold lapses (the event came back elsewhere)", async () => {
    const key = "lane-lapse";
    await pass(key, "l1", "fail", { delayMs: -(HOLD_MARGIN_MS + 1_000), last: false });
    expect(await pass(key, "l2", "ok")).to.equal("handed over");
  });

  it("keeps the place of an event that failed before its turn (its configs could not be read)", async () => {
    const key = "lane-early";
    const order: string[] = [];
    const e1 = enterLane({ orderingKey: key }, "e1", BACK);
    const e2 = enterLane({ orderingKey: key }, "e2", BACK);
    const e3 = enterLane({ orderingKey: key }, "e3", BACK);
    // e2 fails at once, while e1 still hands over.
    e2.failed();
    e2.leave();
    const third = (async () => {
      try {
        await e3.turn;
        order.push("e3 handed over");
      } catch {
        e3.failed();
        order.push("e3 held");
      } finally {
        e3.leave();
      }
    })();
    await e1.turn;
    await new Promise((r) => setTimeout(r, 20));
    e1.failed();
    order.push("e1 failed");
    e1.leave();
    await third;
    expect(order).to.deep.equal(["e1 failed", "e3 held"]);
    // They come back; e2 first is held behind e1, then e1, e2, e3 go in arrival order.
    expect(await pass(key, "e2", "ok")).to.equal("held");
    expect(await pass(key, "e1", "ok")).to.equal("handed over");
    expect(await pass(key, "e2", "ok")).to.equal("handed over");
    expect(await pass(key, "e3", "ok")).to.equal("handed over");
  });

  it("keeps tenants apart: one tenant's held key holds nothing of another's with the same key", async () => {
    const failed = enterLane({ tenant: "acme", orderingKey: "same" }, "a1", BACK);
    await failed.turn;
    failed.failed();
    failed.leave();
    // acme's next event of the key is held behind a1; globex's events of "same" are not.
    const acme = enterLane({ tenant: "acme", orderingKey: "same" }, "a2", BACK);
    const globex = enterLane({ tenant: "globex", orderingKey: "same" }, "g1", BACK);
    const none = enterLane({ orderingKey: "same" }, "n1", BACK);
    const outcome = (l: typeof acme) =>
      l.turn.then(
        () => "handed over",
        (err: unknown) => (err instanceof LaneHeld ? "held" : String(err)),
      );
    expect(await Promise.all([outcome(acme), outcome(globex), outcome(none)])).to.deep.equal([
      "held",
      "handed over",
      "handed over",
    ]);
    for (const l of [acme, globex, none]) l.leave();
    // acme's hold ends once a1 comes back.
    expect(await pass({ tenant: "acme", orderingKey: "same" }, "a1", "ok")).to.equal("handed over");
  });

  it("holds nothing where a failure goes back to the caller (the API)", async () => {
    const key = "lane-api";
    await pass(key, "p1", "fail", null);
    expect(await pass(key, "p2", "ok", null)).to.equal("handed over");
  });

  it("keeps arrival order for events handled at once", async () => {
    const key = "lane-concurrent";
    const order: string[] = [];
    await Promise.all(
      ["c1", "c2", "c3"].map(async (id, i) => {
        const lane = enterLane({ orderingKey: key }, id, BACK);
        try {
          await lane.turn;
          await new Promise((r) => setTimeout(r, (3 - i) * 5));
          order.push(id);
        } finally {
          lane.leave();
        }
      }),
    );
    expect(order).to.deep.equal(["c1", "c2", "c3"]);
  });
});
