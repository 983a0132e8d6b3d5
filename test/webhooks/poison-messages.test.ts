// tags: @long (over 45 s: among the first files the parallel suite starts)
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import { eventIdOf } from "../../core/stored-events.js";
import { WebhookEventType } from "../../workflows/search-attributes.js";
import { DeliveryEnv } from "../support/delivery-env.js";
import {
  deadLetters,
  deepEventText,
  eventually,
  latencySummary,
  lockConfigs,
  lockTable,
  metric,
  replayAll,
  sql,
} from "../support/poison.js";
import { Receiver } from "../support/receiver.js";

/**
 * Messages whose deliveries cannot start, interleaved with valid ones, through
 * the real NATS, PostgreSQL and Temporal dev server: the valid ones keep being
 * delivered at their usual latency, each poison message ends in the dead-letter
 * table with its reason, and a replay after fixing the cause delivers it.
 */
describe("poison messages (NATS JetStream)", function () {
  this.timeout(600_000);

  describe("deep payloads, 3 000-character types and an unusable config row among valid events", () => {
    const env = new DeliveryEnv();
    const receiverA = new Receiver();
    const receiverB = new Receiver();
    const receiverL = new Receiver();
    /** Publish time of every valid event, by idempotency key. */
    const publishedAt = new Map<string, number>();
    const SLOTS = 50;
    const DEEP_PER_SLOT = 6;
    const PACE_MS = 250;
    let configB: { id: string };
    let configL: { id: string };
    let healthFailures: string[] = [];

    const latencies = (keys: string[]) =>
      keys.map((k) => {
        const req = receiverA.requests.find((r) => JSON.parse(r.body).idempotency_key === k);
        if (!req) throw new Error(`${k} was not delivered`);
        return req.at - publishedAt.get(k)!;
      });

    /** Publishes valid events one slot every PACE_MS, with `poison(i)` after each; returns their keys. */
    async function paced(tag: string, poison: (i: number) => Promise<void>): Promise<string[]> {
      const keys: string[] = [];
      const start = Date.now();
      for (let i = 0; i < SLOTS; i++) {
        const event = env.event({ idempotency_key: `${tag}-${i}` });
        publishedAt.set(event.idempotency_key, Date.now());
        await env.publish(event);
        keys.push(event.idempotency_key);
        await poison(i);
        const wait = start + (i + 1) * PACE_MS - Date.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      }
      return keys;
    }

    /** Probes /_healthcheck until stopped, keeping every answer that was not 200. */
    function watchHealth(): () => void {
      let on = true;
      void (async () => {
        while (on) {
          const r = await env.api.call("GET", "/_healthcheck").catch((e) => ({ status: 0, text: String(e) }));
          if (r.status !== 200) healthFailures.push(`${r.status} ${r.text}`);
          await new Promise((res) => setTimeout(res, 500));
        }
      })();
      return () => {
        on = false;
      };
    }

    before(async () => {
      await Promise.all([receiverA.start(), receiverB.start(), receiverL.start()]);
      await env.start(["--broker-stuck-after", "5s"]);
      await env.createConfig({
        endpoint: receiverA.url,
        eventTypes: ["ledger.committed_transactions", "ledger.payouts"],
      });
      configL = await env.createConfig({ endpoint: receiverL.url, eventTypes: ["longtypes.*"] });
    });
    after(async () => {
      await Promise.all([receiverA.stop(), receiverB.stop(), receiverL.stop()]);
      await env.stop();
    });

    it("delivers every valid event at its usual latency while hundreds of poison messages go to the dead-letter table", async () => {
      const longType = "t".repeat(3000);
      /** The other deliveries of a slot: a payout (to A, and to B once it exists) and a long type (to L). */
      const companions = (tag: string, i: number) => async () => {
        await env.publish(
          env.event({ idempotency_key: `long-${tag}-${i}`, app: "longtypes", type: longType }),
        );
        await env.publish(env.event({ idempotency_key: `payout-${tag}-${i}`, type: "PAYOUTS" }));
      };
      // Without poison: valid events alone, then with the same companions as below.
      const alone = await paced("alone", async () => {});
      await receiverA.waitFor(SLOTS, 120_000);
      const loaded = await paced("loaded", (i) => companions("loaded", i)());
      await receiverA.waitFor(3 * SLOTS, 120_000);
      await receiverL.waitFor(SLOTS, 120_000);

      // An endpoint `new URL` rejects, written past the API's validation.
      configB = await env.createConfig({ endpoint: receiverB.url, eventTypes: ["ledger.payouts"] });
      await sql(env.api, "UPDATE configs SET endpoint = 'http://[not a host' WHERE id = $1", [configB.id]);

      healthFailures = [];
      const stopWatching = watchHealth();
      const started = Date.now();
      const valid = await paced("valid", async (i) => {
        for (let d = 0; d < DEEP_PER_SLOT; d++) await env.publish(deepEventText(`deep-${i}-${d}`));
        await companions("poison", i)();
      });
      const publishMs = Date.now() - started;
      // A gets the valid events and the payouts (B's share of them fails alone); L the long types.
      await receiverA.waitFor(5 * SLOTS, 120_000);
      await receiverL.waitFor(2 * SLOTS, 120_000);
      stopWatching();
      const quiet = latencySummary(latencies(alone));
      const busy = latencySummary(latencies(loaded));
      const poisoned = latencySummary(latencies(valid));
      const poisonCount = SLOTS * (DEEP_PER_SLOT + 2);
      const row = (s: ReturnType<typeof latencySummary>) => `${s.p50} / ${s.p95} / ${s.max}`;
      console.log(
        `      valid events, publish-to-receipt latency in ms (p50 / p95 / max over ${SLOTS}, ${1000 / PACE_MS}/s):`,
      );
      console.log(`        alone:                                  ${row(quiet)}`);
      console.log(`        with a payout and a long type per event: ${row(busy)}`);
      console.log(
        `        the same plus ${SLOTS * DEEP_PER_SLOT} deep payloads and the payouts' share to an unusable config (${poisonCount} poison messages counting the long types) over ${publishMs} ms: ${row(poisoned)}`,
      );
      // Generous: without isolation they were not delivered within 30 s at all.
      expect(poisoned.max, "slowest valid delivery with poison").to.be.lessThan(30_000);
      expect(healthFailures, "health answers during the poison").to.deep.equal([]);

      const payouts = receiverA.requests.filter((r) => JSON.parse(r.body).type === "ledger.payouts");
      expect(payouts).to.have.length(2 * SLOTS);
      const validKeys = receiverA.requests.map((r) => JSON.parse(r.body).idempotency_key);
      expect(new Set(validKeys).size, "each delivered once").to.equal(validKeys.length);

      const rows = await deadLetters(env.api);
      const deep = rows.filter((r) => r.config_id === null);
      const unusable = rows.filter((r) => r.config_id === configB.id);
      expect(rows).to.have.length(SLOTS * DEEP_PER_SLOT + SLOTS);
      expect(deep).to.have.length(SLOTS * DEEP_PER_SLOT);
      for (const r of deep) {
        expect(r).to.include({
          kind: "permanent",
          delivery_count: 1,
          event_type: "ledger.committed_transactions",
        });
        expect(r.reason).to.equal(
          "the event's payload nests 10000 levels deep; deliveries take at most 128 (MAX_EVENT_DEPTH)",
        );
      }
      expect(unusable).to.have.length(SLOTS);
      for (const r of unusable) {
        expect(r).to.include({ kind: "permanent", delivery_count: 1, event_type: "ledger.payouts" });
        expect(r.reason).to.equal(
          `config ${configB.id} cannot be used: its endpoint "http://[not a host" is not a URL`,
        );
      }

      // Nothing was handed back to the broker: poison is settled on its first delivery.
      const jsm = await env.nats.jetstreamManager();
      const consumer = await jsm.consumers.info(env.stream, `test-${env.stream.toLowerCase()}-${env.topic}`);
      expect(consumer).to.include({ num_pending: 0, num_ack_pending: 0, num_redelivered: 0 });
      expect(consumer.config.max_deliver).to.equal(6);
      expect(await metric(env.api, "webhooks_dead_letters_total", { cause: "event" })).to.equal(
        SLOTS * DEEP_PER_SLOT,
      );
      expect(await metric(env.api, "webhooks_dead_letters_total", { cause: "config" })).to.equal(SLOTS);
      expect(await metric(env.api, "webhooks_messages_redelivered_total")).to.equal(0);
    });

    it("keeps a 3 000-character type whole in the delivered body (the workflow input names the stored event), shortened in Temporal's search attribute and summary", async () => {
      const body = JSON.parse(receiverL.requests[0]!.body);
      expect(body.type).to.equal(`longtypes.${"t".repeat(3000)}`);
      const handle = env.temporal.workflow.getHandle(env.workflowId(configL.id, body.idempotency_key));
      const description = await handle.describe();
      const indexed = description.typedSearchAttributes.get(WebhookEventType)!;
      expect(Array.from(indexed)).to.have.length(255);
      expect(indexed).to.equal(`longtypes.${"t".repeat(244)}…`);
      const summary = (await description.staticSummary())!;
      expect(Buffer.byteLength(summary)).to.be.at.most(200);
      expect(summary.endsWith("…")).to.equal(true);
      const history = await handle.fetchHistory();
      const input = history.events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!;
      // By reference: the input carries the id of the exact bytes delivered, not the event.
      const started = JSON.parse(Buffer.from(input.data!).toString("utf8"));
      expect(started.event).to.equal(undefined);
      expect(started.eventRef).to.deep.equal({
        id: eventIdOf(receiverL.requests[0]!.body),
        bytes: Buffer.byteLength(receiverL.requests[0]!.body),
      });
    });

    it("lists the dead letters through the API, page by page and by config", async () => {
      const seen = new Set<string>();
      let cursor: string | undefined;
      let pages = 0;
      do {
        const r = await env.api.call(
          "GET",
          `/dead-letters?status=pending&pageSize=120${cursor ? `&cursor=${cursor}` : ""}`,
        );
        expect(r.status, r.text).to.equal(200);
        for (const d of r.body.cursor.data) seen.add(d.id);
        cursor = r.body.cursor.next;
        pages++;
      } while (cursor);
      expect(seen.size).to.equal(SLOTS * DEEP_PER_SLOT + SLOTS);
      expect(pages).to.equal(Math.ceil(seen.size / 120));

      const ofB = await env.api.call("GET", `/dead-letters?configID=${configB.id}&pageSize=1000`);
      expect(ofB.body.cursor.data).to.have.length(SLOTS);
      const first = ofB.body.cursor.data[0];
      expect(first).to.include({
        topic: env.topic,
        configID: configB.id,
        kind: "permanent",
        status: "pending",
        eventType: "ledger.payouts",
        deliveryCount: 1,
        replayAttempts: 0,
      });
      expect(first.position).to.match(new RegExp(`^nats:${env.stream}:\\d+$`));
      expect(first.messagePreview).to.match(/^\{"idempotency_key":"payout-poison-/);
      const one = await env.api.call("GET", `/dead-letters/${first.id}`);
      expect(JSON.parse(one.body.data.message)).to.include({ type: "PAYOUTS" });
      expect(one.body.data.messageBytes).to.equal(Buffer.byteLength(one.body.data.message));

      const bad = await env.api.call("GET", "/dead-letters?status=lost");
      expect(bad.status).to.equal(400);
      expect(bad.body.errorMessage).to.equal('status must be one of pending, replayed, got "lost"');
      expect(
        (await env.api.call("GET", "/dead-letters/00000000-0000-4000-8000-000000000000")).status,
      ).to.equal(404);
    });

    it("replays a config's dead letters once its row is fixed, each delivery started once", async () => {
      const ofB = (await env.api.call("GET", `/dead-letters?configID=${configB.id}&pageSize=1000`)).body
        .cursor.data;
      const early = await env.api.call("POST", `/dead-letters/${ofB[0].id}/replay`);
      expect(early.status).to.equal(409);
      expect(early.body.errorMessage).to.equal(
        `still cannot start (0 of 1 deliveries started): config ${configB.id}: config ${configB.id} cannot be used: its endpoint "http://[not a host" is not a URL`,
      );

      await sql(env.api, "UPDATE configs SET endpoint = $2 WHERE id = $1", [configB.id, receiverB.url]);
      await replayAll(
        env.api,
        ofB.map((d: { id: string }) => d.id),
      );
      await receiverB.waitFor(SLOTS, 120_000);
      const keys = receiverB.requests.map((r) => JSON.parse(r.body).idempotency_key).sort();
      expect(keys).to.deep.equal(Array.from({ length: SLOTS }, (_, i) => `payout-poison-${i}`).sort());

      const again = await env.api.call("POST", `/dead-letters/${ofB[0].id}/replay`);
      expect(again.status, again.text).to.equal(200);
      expect(again.body.data.deliveries).to.have.length(1);
      expect(again.body.data.deliveries[0]).to.include({ configID: configB.id, started: false });
      expect(again.body.data.deadLetter).to.include({ status: "replayed", replayAttempts: 3 });
      await new Promise((r) => setTimeout(r, 1000));
      expect(receiverB.requests).to.have.length(SLOTS);

      const replayed = await env.api.call("GET", `/dead-letters?status=replayed&pageSize=1000`);
      expect(replayed.body.cursor.data).to.have.length(SLOTS);
      expect(await metric(env.api, "webhooks_dead_letter_replays_total", { result: "started" })).to.equal(
        SLOTS + 1,
      );
    });

    it("refuses to replay a payload over the bounds, says why, and deletes it on request", async () => {
      const [deep] = (await deadLetters(env.api)).filter((r) => r.config_id === null);
      const r = await env.api.call("POST", `/dead-letters/${deep!.id}/replay`);
      expect(r.status).to.equal(409);
      expect(r.body).to.deep.equal({
        errorCode: "CONFLICT",
        errorMessage:
          "still cannot start (0 of 1 deliveries started): the event's payload nests 10000 levels deep; deliveries take at most 128 (MAX_EVENT_DEPTH)",
      });
      const after = await env.api.call("GET", `/dead-letters/${deep!.id}`);
      expect(after.body.data).to.include({
        status: "pending",
        replayAttempts: 1,
        lastReplayError: r.body.errorMessage,
      });
      const deleted = await env.api.call("DELETE", `/dead-letters/${deep!.id}`);
      expect(deleted.body).to.deep.equal({ data: { id: deep!.id, deleted: true } });
      expect((await env.api.call("GET", `/dead-letters/${deep!.id}`)).status).to.equal(404);
    });
  });

  describe("failures that may pass: redelivered with backoff, bounded, then dead-lettered", () => {
    const env = new DeliveryEnv();
    const receiver = new Receiver();
    const COUNT = 300;
    const spoolParent = mkdtempSync(path.join(tmpdir(), "poison-spool-"));
    const spool = path.join(spoolParent, "spool");

    before(async () => {
      await receiver.start();
      await env.start([
        ...["--storage-sqldb-statement-timeout", "300ms", "--broker-max-deliveries", "3"],
        ...["--broker-redelivery-backoff", "3s", "--broker-stuck-after", "2s"],
        ...["--dead-letter-spool", spool],
      ]);
    });
    after(async () => {
      await receiver.stop();
      await env.stop();
      rmSync(spoolParent, { recursive: true, force: true });
    });

    it("reports the consumer stuck while messages wait, dead-letters them after 3 deliveries, and a replay delivers them", async () => {
      const config = await env.createConfig({ endpoint: receiver.url });
      const jsm = await env.nats.jetstreamManager();
      const consumerName = `test-${env.stream.toLowerCase()}-${env.topic}`;
      expect((await jsm.consumers.info(env.stream, consumerName)).config).to.include({
        max_deliver: 3,
        ack_wait: 3e9,
      });

      const lock = await lockConfigs(env.api);
      let stuck: string | undefined;
      try {
        for (let i = 0; i < COUNT; i++) await env.publish(env.event({ idempotency_key: `blocked-${i}` }));
        // More messages than the consumer takes at once (max_ack_pending 256): some wait, none settles.
        await eventually(
          "health reports the consumer stuck",
          async () => {
            const r = await env.api.call("GET", "/_healthcheck");
            if (r.status === 503 && /stuck/.test(r.body.checks.broker)) stuck = r.body.checks.broker;
            return stuck !== undefined;
          },
          60_000,
        );
        await eventually(
          "every message dead-lettered",
          async () => (await deadLetters(env.api)).length === COUNT,
          180_000,
          500,
        );
      } finally {
        await lock.release();
      }
      console.log(`      health while blocked: ${stuck}`);
      expect(stuck).to.match(
        new RegExp(
          `^error: NATS consumer ${consumerName} is stuck: \\d+ messages waiting and none settled for \\d+s$`,
        ),
      );
      await eventually(
        "health back to ok",
        async () => (await env.api.call("GET", "/_healthcheck")).status === 200,
        30_000,
      );

      const rows = await deadLetters(env.api);
      for (const r of rows) {
        expect(r).to.include({ kind: "exhausted", delivery_count: 3, config_id: null, status: "pending" });
        expect(r.reason).to.equal(
          "still failing after 3 deliveries: the database did not finish a statement within 300ms (--storage-sqldb-statement-timeout)",
        );
      }
      expect(await metric(env.api, "webhooks_messages_redelivered_total")).to.equal(2 * COUNT);
      expect(await metric(env.api, "webhooks_dead_letters_total", { cause: "transient" })).to.equal(COUNT);
      expect(receiver.requests).to.have.length(0);

      const started = Date.now();
      await replayAll(
        env.api,
        rows.map((r) => r.id),
      );
      await receiver.waitFor(COUNT, 180_000);
      console.log(
        `      replayed ${COUNT} dead letters; all delivered ${Date.now() - started} ms after the first replay`,
      );
      const keys = new Set(receiver.requests.map((r) => JSON.parse(r.body).idempotency_key));
      expect(keys.size).to.equal(COUNT);
      // The attempt row is written once the receiver answered.
      await eventually(
        "a success row per delivery",
        async () => (await env.attempts(config.id)).filter((a) => a.status === "success").length === COUNT,
        30_000,
      );
    });

    it("dead-letters a message JetStream gave up on because its last delivery could not be settled", async () => {
      const config = await env.createConfig({ endpoint: receiver.url, eventTypes: ["ledger.abandoned"] });
      // The dead letter can be neither written nor parked (the spool folder replaced by a
      // file): the last delivery ends unsettled. A write refused while parking works is
      // parked instead (unstorable-messages.test.ts).
      const locker = await lockConfigs(env.api);
      const mark = env.api.process.output.length;
      const lockDeadLetters = await lockTable(env.api, "dead_letters");
      rmSync(spool, { recursive: true });
      writeFileSync(spool, "");
      try {
        await env.publish(env.event({ idempotency_key: "abandoned-1", type: "ABANDONED" }));
        await eventually(
          "the third delivery fails to settle",
          async () =>
            /"deliveries":3,"delayMs":3000,"err":"[^"]*statement timeout[^"]*","msg":"message handling failed: redelivering"/.test(
              env.api.process.output.slice(mark),
            ),
          60_000,
        );
      } finally {
        rmSync(spool);
        mkdirSync(spool);
        await lockDeadLetters.release();
        await locker.release();
      }
      expect(env.api.process.output.slice(mark)).to.match(
        /"err":"the dead letter could not be written \(canceling statement due to statement timeout\) nor parked in [^"]*\/spool \(EEXIST: file already exists/,
      );
      let row: Awaited<ReturnType<typeof deadLetters>>[number] | undefined;
      await eventually(
        "the advisory's dead letter",
        async () => {
          row = (await deadLetters(env.api)).find((r) => r.event_type === "ledger.abandoned");
          return row !== undefined;
        },
        30_000,
      );
      expect(row).to.include({
        kind: "exhausted",
        delivery_count: 3,
        reason: "JetStream stopped delivering it after 3 deliveries without an acknowledgement",
      });
      const before = receiver.requests.length;
      const replay = await env.api.call("POST", `/dead-letters/${row!.id}/replay`);
      expect(replay.status, replay.text).to.equal(200);
      await receiver.waitFor(before + 1, 60_000);
      expect(JSON.parse(receiver.requests.at(-1)!.body)).to.include({ idempotency_key: "abandoned-1" });
      await eventually(
        "its success row",
        async () => (await env.attempts(config.id)).map((a) => a.status).join() === "success",
        30_000,
      );
    });
  });
});
