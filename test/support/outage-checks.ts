import type { Client } from "@temporalio/client";
import { expect } from "chai";
import type { JetStreamClient } from "nats";
import { type DeliveryAudit, workflowsNotSucceeded } from "./delivery-audit.js";
import type { HealthWatch } from "./health-watch.js";
import type { PrivateNats } from "./private-nats.js";
import type { PrivatePostgres } from "./private-postgres.js";
import type { Received, Receiver } from "./receiver.js";

// What the outage tests (failure-postgres, failure-nats, failure-temporal, and the outages of
// ordered-failure-postgres) share: the outages by name, a receiver whose answers make
// deliveries straddle the outage, publishing through it, and the delivery promise after it.

/** How long a restarted component stays down: sends, retries and consumer starts all run into it. */
export const DOWN_MS = 3000;
/** How long a hung one hangs: past the health check's 2 s, short of the send's 20 s heartbeat. */
export const HUNG_MS = 10_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A database outage by name: a fast shutdown and a start, or every process stopped (SIGSTOP). */
export const POSTGRES_OUTAGES: Record<string, (pg: PrivatePostgres) => Promise<void>> = {
  restarted: async (pg) => {
    await pg.stop();
    await sleep(DOWN_MS);
    await pg.start();
  },
  "hung (SIGSTOP)": async (pg) => {
    await pg.pause();
    await sleep(HUNG_MS);
    await pg.resume();
  },
};

/** A broker outage by name: a clean shutdown and a start with the store kept, or SIGSTOP. */
export const NATS_OUTAGES: Record<string, (nats: PrivateNats) => Promise<void>> = {
  restarted: async (nats) => {
    await nats.stop();
    await sleep(DOWN_MS);
    await nats.start();
  },
  "hung (SIGSTOP)": async (nats) => {
    nats.signal("SIGSTOP");
    await sleep(HUNG_MS);
    nats.signal("SIGCONT");
  },
};

export interface FlakyReceipts {
  /** Receipts answered 200. */
  answered: Set<Received>;
  /** Webhook ids whose first POST was answered 500 on purpose. */
  failedOnce: Set<string>;
}

/**
 * The receiver answers after `delayMs` (so POSTs are in flight at any instant), and the
 * first POST of each event whose `payload.i` is even gets a 500, so that half the
 * deliveries wait for a retry across the outage.
 */
export function failEvenEventsOnce(receiver: Receiver, delayMs: number): FlakyReceipts {
  const receipts: FlakyReceipts = { answered: new Set(), failedOnce: new Set() };
  receiver.respond = (req, res) =>
    setTimeout(() => {
      const id = String(req.headers["svc-webhook-id"]);
      const even = Number(JSON.parse(req.body).payload.i) % 2 === 0;
      if (even && !receipts.failedOnce.has(id)) {
        receipts.failedOnce.add(id);
        res.writeHead(500).end("not yet");
        return;
      }
      receipts.answered.add(req);
      res.writeHead(200).end("ok");
    }, delayMs);
  return receipts;
}

/**
 * Publishes one event per key (`ledger.<type>`, `payload.i` its index) at a steady 50/s,
 * running `outage` once half are out; resolves when both ended, with when the outage began
 * and when it was over.
 */
export async function publishThroughOutage(
  js: JetStreamClient,
  topic: string,
  keys: string[],
  type: string,
  outage: () => Promise<void>,
): Promise<{ stop: number; up: number }> {
  let window: Promise<{ stop: number; up: number }> | undefined;
  for (const [i, key] of keys.entries()) {
    if (i === Math.floor(keys.length / 2))
      window = (async () => {
        const stop = Date.now();
        await outage();
        return { stop, up: Date.now() };
      })();
    await js.publish(topic, JSON.stringify({ idempotency_key: key, app: "ledger", type, payload: { i } }));
    await sleep(20);
  }
  return window!;
}

/** The figures every outage test prints: how long it lasted, when health told, when all ended. */
export function outageFigures(
  watch: HealthWatch,
  check: string,
  t: { stop: number; up: number; ended: number },
  result: DeliveryAudit,
): Record<string, unknown> {
  const reported = watch.firstFailure(check, t.stop);
  const recovered = watch.firstHealthy(t.up);
  const others = ["database", "broker", "temporal", "worker"].filter((c) => c !== check);
  return {
    outageMs: t.up - t.stop,
    healthReportedAfterMs: reported ? reported.at - t.stop : null,
    healthRecoveredAfterUpMs: recovered ? recovered.at - t.up : null,
    allEndedAfterUpMs: t.ended - t.up,
    attemptRows: result.rows,
    duplicatePosts: result.duplicatePosts,
    [`${check}Reasons`]: watch.reasons(check),
    otherFailedChecks: others.flatMap((c) => watch.reasons(c).map((r) => `${c}: ${r}`)),
  };
}

export interface OutageOutcome {
  result: DeliveryAudit;
  events: number;
  watch: HealthWatch;
  /** The health check that names the component (`database`, `broker`, `temporal`). */
  check: string;
  /** When the outage began and when the component was back. */
  stop: number;
  up: number;
  temporal: Client;
  /** The deliveries' workflow ids. */
  workflowIds: string[];
}

/**
 * The delivery promise after an outage: every event delivered, no attempt with two rows or
 * POSTed twice, nothing left queued, every delivery and workflow ended in success; and
 * health said 503 naming the component while it was out, then 200 by itself.
 */
export async function expectDeliveredThroughOutage(o: OutageOutcome): Promise<void> {
  expect(o.result.lost, "events never delivered").to.deep.equal([]);
  expect(o.result.duplicateRows, "duplicate (webhook_id, retry_attempt) rows").to.equal(0);
  expect(o.result.queued, "rows still queued").to.equal(0);
  expect(o.result.deliveries).to.equal(o.events);
  expect(o.result.notSucceeded, "deliveries whose last row is not success").to.equal(0);
  expect(o.result.duplicatePosts, "the same attempt POSTed more than once").to.equal(0);
  const reported = o.watch.firstFailure(o.check, o.stop);
  expect(reported, `a 503 naming the ${o.check} while it was out`).to.not.equal(undefined);
  expect(reported!.sent, `that 503 was asked for while the ${o.check} was out`).to.be.below(o.up);
  expect(o.watch.firstHealthy(o.up), "health back to 200 by itself").to.not.equal(undefined);
  expect(o.watch.samples.at(-1)!.status).to.equal(200);
  expect(
    await workflowsNotSucceeded(o.temporal, o.workflowIds),
    "workflows not ended in success",
  ).to.deep.equal([]);
}
