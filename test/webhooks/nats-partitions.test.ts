// tags: @long (over 45 s: among the first files the parallel suite starts)
import { mkdirSync, writeFileSync } from "node:fs";
import { expect } from "chai";
import pg from "pg";
import type { ServiceProcess } from "../support/process.js";
import type { Received } from "../support/receiver.js";
import { KilledWorkerStack, orderedEvents } from "../support/worker-process.js";

const KEYS = 20;
const PER_KEY = 50;
const WORKERS = 3;
/** PARTITIONS=1 runs the same with one shared consumer, to see the order lost (it then fails). */
const PARTITIONS = Number(process.env.PARTITIONS ?? 6);

interface Health {
  status: string;
  checks: Record<string, string>;
  details?: Record<string, string>;
}

/** The worker's health answer (its port is in its log). */
async function healthOf(worker: ServiceProcess): Promise<Health> {
  const listen = /"listen":"([^"]+)"[^\n]*worker health endpoint listening/.exec(worker.output)?.[1];
  const res = await fetch(`http://${listen}/_healthcheck`);
  return (await res.json()) as Health;
}

/** The partitions a worker's health says it owns. */
const ownedBy = (h: Health): number[] => {
  const list = /owns partitions ([\d,]+) of/.exec(h.details?.broker ?? "")?.[1];
  return list ? list.split(",").map(Number) : [];
};

/**
 * Three worker processes consume one NATS stream with --nats-partitions 6 and deliver to an
 * ordered config: 1 000 events over 20 ordering keys published at full speed, while one
 * worker, then another, is killed -9 and started again (after 300 and 650 events were
 * handed over, so that the kills fall while the stream is being consumed); then, with
 * another config, while one is stopped (SIGSTOP) for 25 s and resumed. Each key's events
 * reach the receiver in stream order, none lost; the only repeat is a POST in flight at a
 * kill, sent again before anything later of its key.
 */
describe("NATS partitions keep each key's order across consuming processes", function () {
  this.timeout(400_000);
  const stack = new KilledWorkerStack("parts", ["--nats-partitions", String(PARTITIONS)], WORKERS);
  const workers = stack.workers;

  before(() => stack.start());
  after(() => stack.stop());

  /** Waits until the workers' health shows every partition owned once, spread evenly. */
  const waitForEvenOwnership = async (timeoutMs: number) => {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const owned = await Promise.all(workers.map(async (w) => ownedBy(await healthOf(w))));
      const all = owned.flat().sort((a, b) => a - b);
      const even = owned.every((o) => o.length === PARTITIONS / WORKERS);
      if (even && JSON.stringify(all) === JSON.stringify(Array.from({ length: PARTITIONS }, (_, p) => p)))
        return owned;
      if (Date.now() > end) throw new Error(`partitions not spread: ${JSON.stringify(owned)}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  };

  const eventOf = (r: Received) =>
    JSON.parse(r.body) as { type: string; payload: { key: number; seq: number } };

  /** The sequence numbers each key of events of `type` arrived with, in arrival order. */
  const seqs = (type: string) => {
    const byKey = new Map<number, number[]>();
    for (const r of stack.receiver.requests) {
      const e = eventOf(r);
      if (e.type !== type) continue;
      byKey.set(e.payload.key, [...(byKey.get(e.payload.key) ?? []), e.payload.seq]);
    }
    return byKey;
  };
  const received = (type: string) => [...seqs(type).values()].reduce((n, s) => n + s.length, 0);
  const now = () => new Date().toISOString().slice(11, 23);

  /** The "event consumed" lines of events of `type` (by their idempotency key) in a worker's output. */
  const consumedBy = (output: string, type: string) =>
    output.split("\n").filter((l) => l.includes('"event consumed"') && l.includes(`"key":"${type}-`));

  /** Waits until the workers handed over `count` events of `type` (a kill then hits their consuming). */
  const waitForConsumed = async (type: string, count: number, timeoutMs: number) => {
    const end = Date.now() + timeoutMs;
    const consumed = () => stack.outputs().reduce((n, o) => n + consumedBy(o, type).length, 0);
    while (consumed() < count) {
      if (Date.now() > end) throw new Error(`expected ${count} events consumed, got ${consumed()}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  /** Log lines matching `pattern` of every worker so far, the killed ones first, each cut short. */
  const logLines = (pattern: RegExp) =>
    stack.outputs().flatMap((output, i, all) => [
      `--- ${i < all.length - WORKERS ? "killed " : ""}worker process ${i + 1}`,
      ...output
        .split("\n")
        .filter((l) => pattern.test(l))
        .map((l) => {
          const { time, msg, partition, partitions, waitMs, arrived } = JSON.parse(l) as Record<
            string,
            unknown
          >;
          const which = partition ?? (partitions ? JSON.stringify(partitions) : "");
          const more = `${waitMs ? ` (${waitMs} ms)` : ""}${arrived ? ` (stream sequences ${arrived})` : ""}`;
          return `${String(time).slice(11, 23)} ${which} ${msg}${more}`;
        }),
    ]);
  /** Every worker's output in test-output/, to follow an event from process to process. */
  const keepOutputs = (type: string) => {
    mkdirSync("test-output", { recursive: true });
    stack.outputs().forEach((o, i) => {
      writeFileSync(`test-output/nats-partitions-${type}-worker-${i + 1}.log`, o);
    });
    console.log(`worker logs in test-output/nats-partitions-${type}-worker-*.log`);
  };

  /** The order in which a key's deliveries were accepted (their waiting rows), for a failure message. */
  const acceptance = async (configId: string, type: string, line: string) => {
    const key = /^key (\d+)/.exec(line)?.[1];
    const db = new pg.Client({ connectionString: stack.api.db.url });
    await db.connect();
    try {
      const { rows } = await db.query<{ workflow_id: string }>(
        "SELECT workflow_id FROM unsent_deliveries WHERE config_id = $1 AND workflow_id LIKE $2 ORDER BY accepted_at",
        [configId, `%:${type}-${key}-%`],
      );
      return rows.map((r) => r.workflow_id.replace(/^.*-(\d+)$/, "$1")).join(",");
    } finally {
      await db.end();
    }
  };

  /** Per worker process: how many events of `type` it handed over, and from when to when. */
  const consumption = (type: string) =>
    stack.outputs().map((output, i) => {
      const times = consumedBy(output, type).map((l) =>
        String((JSON.parse(l) as { time: string }).time).slice(11, 23),
      );
      const failed = output.split("\n").filter((l) => l.includes("message handling failed")).length;
      return `worker process ${i + 1}: ${times.length} events, ${times[0] ?? "-"} to ${times.at(-1) ?? "-"}, ${failed} hand-overs failed`;
    });
  const HANDOVERS =
    /NATS partition (taken|given up|released)|partitions are lost|went elsewhere|former owner left|"consuming NATS partition"|out of stream order/;

  /**
   * An ordered config for `type`, its KEYS × PER_KEY events published at full speed while
   * `disrupt` acts on the workers, then every event awaited: each key's first arrivals must
   * be 1..PER_KEY, and a repeat only the same event again before any later one.
   */
  const deliverInOrder = async (type: string, disrupt: () => Promise<void>) => {
    const configId = await stack.orderedConfig(type);
    const began = Date.now();
    // Published at full speed: every publish is in flight at once, in stream order.
    await stack.publishAll(orderedEvents(type, KEYS, PER_KEY));
    await disrupt();
    const end = Date.now() + 150_000;
    const all = () => seqs(`ledger.${type}`);
    while (![...all().values()].every((s) => new Set(s).size === PER_KEY) || all().size < KEYS) {
      if (Date.now() > end) {
        const short = [...all()].map(([k, s]) => `${k}:${new Set(s).size}`).join(" ");
        throw new Error(`not all delivered (key:distinct) ${short}`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    const tookMs = Date.now() - began;
    let resent = 0;
    const outOfOrder: string[] = [];
    const inOrder = Array.from({ length: PER_KEY }, (_, i) => i + 1);
    for (const [key, got] of all()) {
      // The only repeat allowed is of the POST in flight when a worker died (its answer was
      // never recorded): the same event again, before any later one. Never an earlier event.
      const collapsed = got.filter((s, i) => i === 0 || s !== got[i - 1]);
      resent += got.length - collapsed.length;
      if (JSON.stringify(collapsed) !== JSON.stringify(inOrder)) {
        const at = collapsed.findIndex((s, i) => s !== i + 1);
        outOfOrder.push(`key ${key}: ${collapsed.slice(Math.max(0, at - 3), at + 4).join(",")}`);
      }
    }
    console.log(
      `${PARTITIONS} partitions, ${WORKERS} workers: ${received(`ledger.${type}`)} POSTs for ${KEYS * PER_KEY} events in ${tookMs} ms; ` +
        `${resent} sent again; ${outOfOrder.length} keys out of order${outOfOrder.length ? `:\n${outOfOrder.join("\n")}` : ""}`,
    );
    if (PARTITIONS > 1) console.log(`hand-overs:\n${logLines(HANDOVERS).join("\n")}`);
    console.log(`consumed:\n${consumption(type).join("\n")}`);
    if (outOfOrder.length > 0) {
      keepOutputs(type);
      for (const k of outOfOrder)
        console.log(`${k}; handed over in the order ${await acceptance(configId, type, k)}`);
    }
    expect(outOfOrder, "keys out of order").to.deep.equal([]);
    return { resent };
  };

  it("delivers every key in order with no gap, across three processes and two kills", async () => {
    if (PARTITIONS > 1)
      console.log(`ownership before: ${JSON.stringify(await waitForEvenOwnership(60_000))}`);
    const { resent } = await deliverInOrder("partitioned", async () => {
      for (const [at, worker] of [
        [300, 0],
        [650, 1],
      ] as const) {
        await waitForConsumed("partitioned", at, 150_000);
        console.log(`${now()} killing worker ${worker + 1} at ${at} events consumed`);
        await stack.restartWorker(worker);
      }
    });
    // At most the sends in flight at the two kills.
    expect(resent).to.be.at.most(2 * KEYS);
    if (PARTITIONS > 1) {
      // The restarted workers took their share again.
      const owned = await waitForEvenOwnership(60_000);
      console.log(`ownership after: ${JSON.stringify(owned)}`);
      expect(logLines(HANDOVERS).some((l) => l.includes("NATS partition taken"))).to.equal(true);
    }
  });

  it("takes the partitions of a stopped process (SIGSTOP) and keeps the order when it resumes", async function () {
    if (PARTITIONS === 1) this.skip();
    const stopped = workers[2]!;
    const before = ownedBy(await healthOf(stopped));
    expect(before, "the partitions of the worker to stop").to.not.be.empty;
    await deliverInOrder("partitioned_stop", async () => {
      await waitForConsumed("partitioned_stop", 300, 150_000);
      console.log(`${now()} stopping worker 3 (owning ${before}) at 300 events consumed, for 25 s`);
      stopped.child.kill("SIGSTOP");
      // Its lock session ends after 15 s of silence; the others take its partitions then.
      const end = Date.now() + 25_000;
      const others = () => Promise.all(workers.slice(0, 2).map(async (w) => ownedBy(await healthOf(w))));
      let taken = false;
      while (Date.now() < end) {
        const owned = (await others()).flat();
        if (before.every((p) => owned.includes(p))) taken = true;
        await new Promise((r) => setTimeout(r, 500));
      }
      console.log(`${now()} resuming worker 3; its partitions were taken: ${taken}`);
      stopped.child.kill("SIGCONT");
      expect(taken, "the stopped worker's partitions taken by the others").to.equal(true);
    });
    await stopped.waitForOutput(/partitions are lost/, 30_000);
    console.log(`ownership after: ${JSON.stringify(await waitForEvenOwnership(60_000))}`);
  });
});
