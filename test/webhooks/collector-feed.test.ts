import { randomUUID } from "node:crypto";
import { expect } from "chai";
import pg from "pg";
import { recordCollected, type UnsentWait } from "../../activities/unsent-deliveries.js";
import { deliveryKey, parseEventMessage, webhookIdFor } from "../../core/event-message.js";
import { storeEvent, storeEventBody } from "../../core/stored-events.js";
import { feedCollector } from "../../workers/collector-feed.js";
import { deliveryWorkflowId } from "../../workers/start-delivery.js";
import type { BatchItem } from "../../workflows/batch-delivery.js";
import { DeliveryEnv } from "../support/delivery-env.js";
import { createTestDatabase, type TestDatabase } from "../support/postgres.js";
import { Receiver } from "../support/receiver.js";
import { waitFor } from "../support/redis-servers.js";

/**
 * workers/collector-feed.ts: the events bound for one collector while its signal is in
 * flight go next as one group (one INSERT of their waiting rows, then one signal), and no
 * event is lost when its process dies between its waiting row and its signal.
 */
describe("feeding a batched config's collector", function () {
  this.timeout(120_000);

  describe("groups (real PostgreSQL; the signal is a function the test holds)", () => {
    let db: TestDatabase;
    let pool: pg.Pool;
    let eventId: string;
    const configId = randomUUID();

    before(async () => {
      db = await createTestDatabase();
      pool = new pg.Pool({ connectionString: db.url });
      eventId = (await storeEventBody(pool, '{"type":"feed"}', "feed", "feed-1")).id;
    });
    after(async () => {
      await pool?.end();
      await db?.drop();
    });

    const entry = (webhookId = randomUUID()): { item: BatchItem; wait: UnsentWait } => {
      const acceptedAt = new Date();
      return {
        item: { webhookId, eventRef: { id: eventId, bytes: 15 }, acceptedAt: acceptedAt.toISOString() },
        wait: {
          webhookId,
          configId,
          workflowId: `delivery:${configId}:${webhookId}`,
          eventId,
          acceptedAt,
          reason: "waiting for its batch",
          nextTryAt: new Date(acceptedAt.getTime() + 1000),
        },
      };
    };
    const waitingRows = async (ids: string[]) =>
      (
        await pool.query<{ webhook_id: string }>(
          "SELECT webhook_id FROM unsent_deliveries WHERE webhook_id = ANY($1::uuid[]) AND state = 'waiting'",
          [ids],
        )
      ).rows.map((r) => r.webhook_id);

    /** A signal that records each group and its rows then, and ends when the test says. */
    function heldSignal() {
      const groups: { ids: string[]; rowsThen: string[] }[] = [];
      const releases: (() => void)[] = [];
      const send = async (items: BatchItem[]) => {
        const ids = items.map((i) => i.webhookId);
        groups.push({ ids, rowsThen: (await waitingRows(ids)).sort() });
        await new Promise<void>((r) => releases.push(r));
      };
      return { groups, releases, send };
    }

    it("sends the first event alone and the events arriving meanwhile as one group, rows first, in order", async () => {
      const collector = `batch:${randomUUID()}`;
      const signal = heldSignal();
      const entries = Array.from({ length: 6 }, () => entry());
      const first = feedCollector(pool, collector, entries[0]!, signal.send);
      await waitFor("the first signal", async () => signal.groups.length === 1, 10_000);
      const rest = entries.slice(1).map((e) => feedCollector(pool, collector, e, signal.send));
      signal.releases[0]!();
      await waitFor("the second signal", async () => signal.groups.length === 2, 10_000);
      signal.releases[1]!();
      expect(await Promise.all([first, ...rest])).to.deep.equal([true, true, true, true, true, true]);
      const ids = entries.map((e) => e.item.webhookId);
      expect(signal.groups).to.deep.equal([
        { ids: ids.slice(0, 1), rowsThen: ids.slice(0, 1) },
        { ids: ids.slice(1), rowsThen: ids.slice(1).sort() },
      ]);
    });

    it("answers false for an event whose row exists, and signals it again; a repeat in one group goes once", async () => {
      const collector = `batch:${randomUUID()}`;
      const signal = heldSignal();
      const before = entry();
      const firstTime = feedCollector(pool, collector, before, signal.send);
      await waitFor("the first signal", async () => signal.groups.length === 1, 10_000);
      const fresh = entry();
      const again = [
        feedCollector(pool, collector, before, signal.send),
        feedCollector(pool, collector, fresh, signal.send),
        feedCollector(pool, collector, fresh, signal.send),
      ];
      signal.releases[0]!();
      await waitFor("the second signal", async () => signal.groups.length === 2, 10_000);
      signal.releases[1]!();
      expect(await firstTime).to.equal(true);
      expect(await Promise.all(again)).to.deep.equal([false, true, false]);
      expect(signal.groups[1]!.ids).to.deep.equal([before.item.webhookId, fresh.item.webhookId]);
    });

    it("fails every event of a group whose signal failed, keeps their rows for reconciliation, and goes on", async () => {
      const collector = `batch:${randomUUID()}`;
      const signal = heldSignal();
      const first = feedCollector(pool, collector, entry(), signal.send);
      await waitFor("the first signal", async () => signal.groups.length === 1, 10_000);
      const lost = [entry(), entry()];
      const failing = lost.map((e) =>
        feedCollector(pool, collector, e, async () => {
          throw new Error("Temporal unavailable");
        }),
      );
      signal.releases[0]!();
      expect(await first).to.equal(true);
      for (const f of failing) {
        const err = await f.then(
          () => undefined,
          (e: Error) => e,
        );
        expect(err?.message).to.equal("Temporal unavailable");
      }
      const ids = lost.map((e) => e.item.webhookId);
      expect((await waitingRows(ids)).sort()).to.deep.equal([...ids].sort());
      const later = feedCollector(pool, collector, entry(), signal.send);
      await waitFor("the next signal", async () => signal.groups.length === 2, 10_000);
      signal.releases[1]!();
      expect(await later).to.equal(true);
    });
  });

  describe("a process that died between an event's waiting row and its signal", () => {
    const env = new DeliveryEnv();
    let receiver: Receiver;

    before(async () => {
      await env.start(["--retry-period", "300ms", "--reconcile-grace", "1s"]);
      receiver = await new Receiver().start();
    });
    after(async () => {
      await receiver?.stop();
      await env.stop();
    });

    it("has its event delivered in a batch by reconciliation, once, and its redelivery recognised", async () => {
      const config = await env.createConfig({
        endpoint: receiver.url,
        eventTypes: ["ledger.feed_died"],
        batch: { maxEvents: 10, maxWaitMs: 200 },
      });
      const message = env.event({ type: "feed_died", idempotency_key: "feed-died-1", payload: { seq: 1 } });
      const data = Buffer.from(JSON.stringify(message));
      const event = parseEventMessage(data);
      const workflowId = deliveryWorkflowId(config.id, deliveryKey(event.idempotency_key, data));
      const webhookId = webhookIdFor(workflowId);
      // What the start path wrote before its process died: the stored event and the waiting
      // row, in the shape collector-feed writes it; no signal ever left, no answer was sent.
      const pool = new pg.Pool({ connectionString: env.api.db.url });
      try {
        const stored = await storeEvent(pool, event);
        const acceptedAt = new Date();
        const inserted = await recordCollected(pool, [
          {
            webhookId,
            configId: config.id,
            workflowId,
            eventId: stored.ref.id,
            acceptedAt,
            reason: "waiting for its batch (up to 10 events or 200 ms)",
            nextTryAt: new Date(acceptedAt.getTime() + 200),
          },
        ]);
        expect([...inserted]).to.deep.equal([webhookId]);
      } finally {
        await pool.end();
      }
      await waitFor("the batch", async () => receiver.requests.length >= 1, 60_000);
      const [post] = receiver.requests;
      expect(post!.headers["svc-webhook-batch-ids"]).to.equal(webhookId);
      expect(
        (JSON.parse(post!.body) as { payload: { seq: number } }[]).map((e) => e.payload.seq),
      ).to.deep.equal([1]);
      await waitFor("its success row", async () => (await env.attempts(config.id)).length === 1, 30_000);
      // The producer, never answered, sends the event again: recognised as accepted before.
      const again = await env.api.call("POST", "/events", message);
      expect(again.status, again.text).to.equal(200);
      expect(again.body.data.deliveries).to.deep.equal([
        { configID: config.id, webhookID: webhookId, workflowID: workflowId, started: false },
      ]);
      const rows = await env.attempts(config.id);
      expect(rows.map((r) => [r.webhook_id, r.status])).to.deep.equal([[webhookId, "success"]]);
    });
  });
});
