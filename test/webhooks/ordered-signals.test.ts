import { expect } from "chai";
import { signalInOrder } from "../../workers/ordered-signals.js";
import type { OrderedItem } from "../../workflows/ordered-delivery.js";

const item = (n: number) => ({ workflowId: `delivery:c:${n}` }) as OrderedItem;

/** A send that holds each signal until released, recording what each carried. */
function heldSends() {
  const sent: string[][] = [];
  const releases: Array<(err?: Error) => void> = [];
  const send = (items: OrderedItem[]) =>
    new Promise<void>((resolve, reject) => {
      sent.push(items.map((i) => i.workflowId));
      releases.push((err) => (err ? reject(err) : resolve()));
    });
  return { sent, releases, send };
}

const tick = () => new Promise((r) => setImmediate(r));

/**
 * workers/ordered-signals.ts: a key's signals leave one at a time, in hand-in order, and
 * what was handed in meanwhile leaves together in the next signal.
 */
describe("ordered signals (one key's hand-over)", () => {
  it("sends the first alone, the rest handed in meanwhile together and in order, each only after the one before", async () => {
    const { sent, releases, send } = heldSends();
    const done = [1, 2, 3, 4].map((n) => signalInOrder("ordered:c:a", item(n), send));
    await tick();
    expect(sent).to.deep.equal([["delivery:c:1"]]);
    releases[0]!();
    await tick();
    expect(sent).to.deep.equal([["delivery:c:1"], ["delivery:c:2", "delivery:c:3", "delivery:c:4"]]);
    releases[1]!();
    await Promise.all(done);
    // Drained: the next one starts a new signal at once.
    const next = signalInOrder("ordered:c:a", item(5), send);
    await tick();
    expect(sent.at(-1)).to.deep.equal(["delivery:c:5"]);
    releases[2]!();
    await next;
  });

  it("keeps each key workflow's signals apart", async () => {
    const { sent, releases, send } = heldSends();
    const a = signalInOrder("ordered:c:a", item(1), send);
    const b = signalInOrder("ordered:c:b", item(2), send);
    await tick();
    expect(sent).to.deep.equal([["delivery:c:1"], ["delivery:c:2"]]);
    releases[0]!();
    releases[1]!();
    await Promise.all([a, b]);
  });

  it("fails only the events of a failed signal; the ones after it still go", async () => {
    const { sent, releases, send } = heldSends();
    const first = signalInOrder("ordered:c:f", item(1), send);
    const second = signalInOrder("ordered:c:f", item(2), send);
    await tick();
    releases[0]!(new Error("Temporal unreachable"));
    await first.then(
      () => expect.fail("the first signal failed"),
      (err: Error) => expect(err.message).to.equal("Temporal unreachable"),
    );
    await tick();
    expect(sent).to.deep.equal([["delivery:c:1"], ["delivery:c:2"]]);
    releases[1]!();
    await second;
  });
});
