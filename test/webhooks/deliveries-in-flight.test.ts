// tags: @long (over 45 s: among the first files the parallel suite starts)
import { expect } from "chai";
import { DeliveriesInFlight } from "../../workers/deliveries-in-flight.js";
import { DeliveryEnv } from "../support/delivery-env.js";
import { freePort } from "../support/ports.js";
import { ServiceProcess } from "../support/process.js";
import { Receiver } from "../support/receiver.js";
import { settled } from "../support/settled.js";

// --max-deliveries-in-flight: starts wait while this process's deliveries have that many
// sends under way. First the count as starts and the workflows' sinks drive it, then the
// bound seen by a real receiver, in both send modes, and a parked delivery not counted.

describe("deliveries in flight: the count", () => {
  it("lets starts through below the maximum and then one per finished send, in the order they asked", async () => {
    const inFlight = new DeliveriesInFlight(2);
    expect((await inFlight.reserve("a", 60_000)).waited).to.equal(false);
    expect((await inFlight.reserve("b", 60_000)).waited).to.equal(false);
    const order: string[] = [];
    const c = inFlight.reserve("c", 60_000).then(() => order.push("c"));
    const d = inFlight.reserve("d", 60_000).then(() => order.push("d"));
    expect(await settled(c)).to.equal(false);
    expect(inFlight.waiting).to.equal(2);
    // A send starting (its workflow's sink) for a delivery already counted changes nothing.
    inFlight.add("a");
    expect(inFlight.size).to.equal(2);
    inFlight.remove("a");
    expect(await settled(c)).to.equal(true);
    expect(await settled(d)).to.equal(false);
    // The end of a send nobody counted here (its workflow came from another process) frees nothing.
    inFlight.remove("elsewhere");
    expect(await settled(d)).to.equal(false);
    inFlight.remove("b");
    expect(await settled(d)).to.equal(true);
    expect(order).to.deep.equal(["c", "d"]);
    expect(inFlight.size).to.equal(2);
  });

  it("counts a delivery once when it is started again (a redelivered event), and says which start counted it", async () => {
    const inFlight = new DeliveriesInFlight(2);
    expect(await inFlight.reserve("a", 60_000)).to.deep.equal({ waited: false, counted: true });
    // The second start's entry is the first one's: its failure (already started) must not remove it.
    expect(await inFlight.reserve("a", 60_000)).to.deep.equal({ waited: false, counted: false });
    expect(inFlight.size).to.equal(1);
  });

  it("does not report an entry past its expiry as in flight, swept or not", async () => {
    let now = 1_000;
    const inFlight = new DeliveriesInFlight(2, 5_000, () => now);
    await inFlight.reserve("a", 60_000);
    now += 3_000;
    await inFlight.reserve("b", 60_000);
    expect(inFlight.size).to.equal(2);
    now += 2_000;
    expect(inFlight.size).to.equal(1);
    now += 3_000;
    expect(inFlight.size).to.equal(0);
  });

  it("makes a newcomer wait behind starts already waiting", async () => {
    const inFlight = new DeliveriesInFlight(1);
    await inFlight.reserve("a", 60_000);
    const b = inFlight.reserve("b", 60_000);
    inFlight.remove("a");
    // "b" was woken and took the place in the same turn: "c" finds none.
    const c = inFlight.reserve("c", 60_000);
    expect(await settled(b)).to.equal(true);
    expect(await settled(c)).to.equal(false);
    expect(inFlight.size).to.equal(1);
  });

  it("lets a start go after the longest wait, counted, when no send finished", async () => {
    const inFlight = new DeliveriesInFlight(1);
    await inFlight.reserve("a", 60_000);
    const started = Date.now();
    expect((await inFlight.reserve("b", 50)).waited).to.equal(true);
    expect(Date.now() - started).to.be.at.least(45);
    expect(inFlight.waiting).to.equal(0);
    expect(inFlight.size).to.equal(2);
  });

  it("stops counting a delivery a second after its POST left (its receiver is taking its time)", async () => {
    let now = 1_000;
    const inFlight = new DeliveriesInFlight(1, 150_000, () => now);
    await inFlight.reserve("slow", 60_000);
    inFlight.posting("slow");
    now += 999;
    expect((await inFlight.reserve("early", 10)).waited).to.equal(true);
    inFlight.remove("early");
    now += 2;
    expect((await inFlight.reserve("next", 60_000)).waited).to.equal(false);
    // A POST of a delivery not counted here (started by another process) adds nothing.
    inFlight.posting("elsewhere");
    expect(inFlight.size).to.equal(1);
  });

  it("wakes a waiting start when a POST has been out a second, without a send finishing", async () => {
    const inFlight = new DeliveriesInFlight(1);
    await inFlight.reserve("slow", 60_000);
    inFlight.posting("slow");
    const asked = Date.now();
    expect((await inFlight.reserve("next", 60_000)).waited).to.equal(true);
    expect(Date.now() - asked).to.be.within(900, 5_000);
    expect(inFlight.waiting).to.equal(0);
  });

  it("stops counting a send 5 s after it started, wherever its POST runs (or if its workflow left)", async () => {
    let now = 1_000;
    const inFlight = new DeliveriesInFlight(1, 5_000, () => now);
    await inFlight.reserve("elsewhere", 60_000);
    // Its send starting (the sink) keeps the start's expiry: it counts 5 s from the start.
    now += 2_000;
    inFlight.add("elsewhere");
    now += 2_999;
    expect((await inFlight.reserve("early", 10)).waited).to.equal(true);
    inFlight.remove("early");
    now += 2;
    expect((await inFlight.reserve("next", 60_000)).waited).to.equal(false);
    expect(inFlight.size).to.equal(1);
  });
});

describe("deliveries in flight: --max-deliveries-in-flight end to end", function () {
  this.timeout(120_000);
  let receiver: Receiver;
  /** Requests the receiver holds now, and the most it held at once, by path. */
  const open = new Map<string, number>();
  const most = new Map<string, number>();
  /** How long the receiver holds an `ok` request before answering 200. */
  const HOLD_MS = 150;
  /** How long it holds a request to a `-slow` path (`-slower`: SLOWER_MS), and how many it holds now. */
  const SLOW_MS = 6_000;
  const SLOWER_MS = 12_000;
  let slowOpen = 0;

  before(async () => {
    receiver = await new Receiver().start();
    receiver.respond = (req, res) => {
      if (req.path.endsWith("-failing")) return void res.writeHead(500).end("no");
      if (req.path.endsWith("-slow") || req.path.endsWith("-slower")) {
        slowOpen++;
        return void setTimeout(
          () => {
            slowOpen--;
            res.writeHead(200).end("ok");
          },
          req.path.endsWith("-slow") ? SLOW_MS : SLOWER_MS,
        );
      }
      const n = (open.get(req.path) ?? 0) + 1;
      open.set(req.path, n);
      most.set(req.path, Math.max(most.get(req.path) ?? 0, n));
      setTimeout(() => {
        open.set(req.path, open.get(req.path)! - 1);
        res.writeHead(200).end("ok");
      }, HOLD_MS);
    };
  });
  after(async () => {
    await receiver?.stop();
  });

  /** Publishes `n` events at once for a new config; the most requests the receiver held at once. */
  async function burst(env: DeliveryEnv, n: number): Promise<number> {
    const type = `inflight_${Math.random().toString(36).slice(2)}`;
    const path = `/hook-${type}`;
    const config = await env.createConfig({
      endpoint: receiver.url.replace("/hook", path),
      eventTypes: [`ledger.${type}`],
    });
    const events = Array.from({ length: n }, () => env.event({ type }));
    await Promise.all(events.map((e) => env.publish(e)));
    for (const e of events) {
      expect(await env.result(config.id, e.idempotency_key)).to.include({ status: "success", attempts: 1 });
    }
    return most.get(path) ?? 0;
  }

  /** The metric's value; with `label` (e.g. `result="delivered"`), the sum of its series carrying it. */
  async function metric(env: DeliveryEnv, name: string, label?: string): Promise<number> {
    const text = await (await fetch(`${env.api.url}/metrics`)).text();
    const lines = text.split("\n");
    if (!label) {
      const line = lines.find((l) => l.startsWith(`${name} `));
      return Number(line?.split(" ")[1] ?? Number.NaN);
    }
    return lines
      .filter((l) => l.startsWith(`${name}{`) && l.includes(label))
      .reduce((sum, l) => sum + Number(l.split(" ").at(-1)), 0);
  }

  /** Messages this process consumed with every start done (or found already started). */
  const delivered = (env: DeliveryEnv) =>
    metric(env, "webhooks_messages_consumed_total", 'result="delivered"');

  for (const mode of ["queue", "local"]) {
    describe(`--send-mode ${mode}, --max-deliveries-in-flight 3`, () => {
      const env = new DeliveryEnv();
      // Retries an hour away: a failed delivery stays parked for the whole test.
      before(() =>
        env.start([
          ...["--send-mode", mode, "--max-deliveries-in-flight", "3"],
          ...["--min-backoff-delay", "1h", "--max-backoff-delay", "2h"],
        ]),
      );
      after(() => env.stop());

      it("never has more than 3 sends under way, and delivers every event once", async () => {
        expect(await burst(env, 24)).to.be.within(1, 3);
        expect(await metric(env, "webhooks_deliveries_in_flight")).to.equal(0);
        expect(await metric(env, "webhooks_starts_waiting_for_deliveries")).to.equal(0);
      });

      it("does not count a delivery parked on its retry timer", async () => {
        const type = `parked_${Math.random().toString(36).slice(2)}`;
        const failing = await env.createConfig({
          endpoint: receiver.url.replace("/hook", `/hook-${type}-failing`),
          eventTypes: [`ledger.${type}`],
        });
        for (let i = 0; i < 3; i++) await env.publish(env.event({ type }));
        const started = Date.now();
        while ((await env.attempts(failing.id)).filter((a) => a.status === "to retry").length < 3) {
          if (Date.now() - started > 20_000) throw new Error("the failing deliveries did not all park");
          await new Promise((r) => setTimeout(r, 50));
        }
        // Three parked deliveries would hold every place: each start would wait 10 s.
        const published = Date.now();
        await burst(env, 6);
        expect(Date.now() - published).to.be.below(8_000);
      });
    });
  }

  describe("slow receivers, --max-deliveries-in-flight 3", () => {
    const env = new DeliveryEnv();
    before(() => env.start(["--max-deliveries-in-flight", "3"]));
    after(() => env.stop());

    it("do not hold back other configs' deliveries while they answer", async () => {
      await holdThree(env, "slow");
      // Counted until their receiver answers, the three would hold every place for 6 s.
      const published = Date.now();
      await burst(env, 6);
      expect(Date.now() - published).to.be.below(4_000);
      expect(slowOpen).to.equal(3);
    });
  });

  /** Publishes 3 events to a receiver path that holds them; resolves once it holds all 3. */
  async function holdThree(env: DeliveryEnv, suffix: string): Promise<void> {
    const type = `slow_${Math.random().toString(36).slice(2)}`;
    await env.createConfig({
      endpoint: receiver.url.replace("/hook", `/hook-${type}-${suffix}`),
      eventTypes: [`ledger.${type}`],
    });
    const before = slowOpen;
    for (let i = 0; i < 3; i++) await env.publish(env.event({ type }));
    const started = Date.now();
    while (slowOpen < before + 3) {
      if (Date.now() - started > 20_000) throw new Error("the slow receiver did not get 3 requests");
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  describe("slow receivers whose sends run in another process, --max-deliveries-in-flight 3", () => {
    const env = new DeliveryEnv();
    let sends: ServiceProcess;
    before(async () => {
      await env.start(["--task-queues", "workflows,maintenance", "--max-deliveries-in-flight", "3"]);
      const port = await freePort();
      sends = new ServiceProcess("webhooks", [
        ...["worker", "--listen", `127.0.0.1:${port}`, "--no-consume", "--task-queues", "sends"],
        ...["--storage-sqldb-conn-string", env.api.db.url, "--temporal-address", env.api.temporalAddress],
        ...["--task-queue", env.api.taskQueue],
      ]);
      await sends.waitHealthy(`http://127.0.0.1:${port}/_healthcheck`);
    });
    after(async () => {
      await sends?.stop();
      await env.stop();
    });

    // First in its block: no other delivery is counted yet.
    it("keeps counting a delivery whose event comes again while its send is under way", async () => {
      const type = `dup_${Math.random().toString(36).slice(2)}`;
      await env.createConfig({
        endpoint: receiver.url.replace("/hook", `/hook-${type}-slower`),
        eventTypes: [`ledger.${type}`],
      });
      const event = env.event({ type });
      const consumedBefore = await delivered(env);
      const heldBefore = slowOpen;
      await env.publish(event);
      const started = Date.now();
      while (slowOpen < heldBefore + 1) {
        if (Date.now() - started > 20_000) throw new Error("the slow receiver did not get the request");
        await new Promise((r) => setTimeout(r, 20));
      }
      // Its POST runs in the other process: here it counts for 5 s from its start.
      expect(await metric(env, "webhooks_deliveries_in_flight")).to.equal(1);
      await env.publish(event);
      while ((await delivered(env)) < consumedBefore + 2) {
        if (Date.now() - started > 20_000) throw new Error("the second copy of the event was not consumed");
        await new Promise((r) => setTimeout(r, 20));
      }
      // The second start was refused (already started): the first one's place stands.
      expect(Date.now() - started).to.be.below(4_000);
      expect(await metric(env, "webhooks_deliveries_in_flight")).to.equal(1);
      expect(slowOpen).to.equal(heldBefore + 1);
    });

    it("hold back other configs' deliveries for 5 s at most (this process never sees those POSTs)", async () => {
      await holdThree(env, "slower");
      const published = Date.now();
      await burst(env, 6);
      // Counted until their receiver answers, the three would hold every place for 12 s.
      expect(Date.now() - published).to.be.below(9_000);
      expect(slowOpen).to.be.at.least(3);
    });
  });

  describe("the default (32) against the same burst", () => {
    const env = new DeliveryEnv();
    before(() => env.start());
    after(() => env.stop());

    it("has more than 3 sends under way at once (what the bound above holds back)", async () => {
      expect(await burst(env, 24)).to.be.above(3);
    });
  });
});
