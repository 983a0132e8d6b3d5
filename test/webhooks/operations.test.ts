import { randomUUID } from "node:crypto";
import { expect } from "chai";
import pg from "pg";
import { DeliveryEnv } from "../support/delivery-env.js";
import { Receiver } from "../support/receiver.js";

describe("delivery operations: replay, metrics, maintenance schedules", function () {
  this.timeout(120_000);
  const env = new DeliveryEnv();
  let receiver: Receiver;

  before(async () => {
    await env.start(["--retention-period", "1h"]);
    receiver = await new Receiver().start();
  });
  after(async () => {
    await receiver?.stop();
    await env.stop();
  });

  const sql = async <R = Record<string, unknown>>(text: string, params: unknown[] = []): Promise<R[]> => {
    const client = new pg.Client({ connectionString: env.api.db.url });
    await client.connect();
    try {
      return (await client.query(text, params)).rows as R[];
    } finally {
      await client.end();
    }
  };

  describe("replay", () => {
    it("delivers the event again as a new delivery linked to the original, once per Idempotency-Key", async () => {
      const type = `replay_${Date.now()}`;
      const config = await env.createConfig({ endpoint: receiver.url, eventTypes: [`ledger.${type}`] });
      const event = env.event({ type });
      await env.publish(event);
      const original = await env.result(config.id, event.idempotency_key);
      expect(original.status).to.equal("success");
      const before = receiver.requests.length;

      const first = await env.api.call("POST", `/webhooks/${original.webhookId}/replay`, undefined, {
        "idempotency-key": "replay-1",
      });
      expect(first.status, first.text).to.equal(202);
      expect(first.body.data).to.include({ replayOf: original.webhookId, created: true });
      const replay = await env.temporal.workflow.getHandle(first.body.data.workflowID).result();
      expect(replay).to.include({ status: "success", webhookId: first.body.data.webhookID });
      const [req] = receiver.requests.slice(before);
      expect(req!.headers["svc-webhook-id"]).to.equal(first.body.data.webhookID);
      expect(JSON.parse(req!.body)).to.include({ idempotency_key: event.idempotency_key });

      const again = await env.api.call("POST", `/webhooks/${original.webhookId}/replay`, undefined, {
        "idempotency-key": "replay-1",
      });
      expect(again.status).to.equal(200);
      expect(again.body.data).to.deep.equal({ ...first.body.data, created: false });
      expect(receiver.requests.length).to.equal(before + 1);

      const view = await env.api.call("GET", `/webhooks/${first.body.data.webhookID}`);
      expect(view.body.data.attempts[0].replayOf).to.equal(original.webhookId);
    });

    it("requires an Idempotency-Key, a known webhook and an active config", async () => {
      const missingKey = await env.api.call("POST", `/webhooks/${randomUUID()}/replay`);
      expect(missingKey.status).to.equal(400);
      expect(missingKey.body.errorMessage).to.match(/Idempotency-Key header is required/);
      const unknown = await env.api.call("POST", `/webhooks/${randomUUID()}/replay`, undefined, {
        "idempotency-key": "k",
      });
      expect(unknown.status).to.equal(404);
      const config = await env.createConfig({
        endpoint: receiver.url,
        eventTypes: ["ledger.inactive_replay"],
      });
      const test = await env.api.call("POST", `/configs/${config.id}/test`);
      await env.api.call("PUT", `/configs/${config.id}/deactivate`);
      const inactive = await env.api.call("POST", `/webhooks/${test.body.data.webhookID}/replay`, undefined, {
        "idempotency-key": "k",
      });
      expect(inactive.status).to.equal(409);
      expect(inactive.body.errorCode).to.equal("CONFLICT");
    });
  });

  describe("metrics", () => {
    it("exposes attempts by outcome, consumed messages and started workflows in Prometheus format", async () => {
      const type = `metrics_${Date.now()}`;
      const config = await env.createConfig({ endpoint: receiver.url, eventTypes: [`ledger.${type}`] });
      const event = env.event({ type });
      await env.publish(event);
      await env.result(config.id, event.idempotency_key);
      const res = await fetch(`${env.api.url}/metrics`);
      expect(res.status).to.equal(200);
      const text = await res.text();
      expect(text).to.match(/webhooks_delivery_attempts_total\{status="success",status_class="2xx"\} [1-9]/);
      expect(text).to.match(
        new RegExp(`webhooks_messages_consumed_total\\{topic="${env.topic}",result="delivered"\\} [1-9]`),
      );
      expect(text).to.match(/webhooks_workflows_started_total [1-9]/);
      expect(text).to.match(/webhooks_attempt_duration_seconds_count [1-9]/);
    });
  });

  describe("maintenance schedules", () => {
    const retentionId = () => `${env.api.taskQueue}-attempts-retention`;

    it("register retention as a Temporal Schedule on the maintenance task queue (stale recovery is gone)", async () => {
      const d = await env.temporal.schedule.getHandle(retentionId()).describe();
      expect(d.action.type).to.equal("startWorkflow");
      expect((d.action as { taskQueue: string }).taskQueue).to.equal(`${env.api.taskQueue}-maintenance`);
      expect(d.spec.intervals?.[0]?.every).to.equal(3_600_000);
      const stale = await env.temporal.schedule
        .getHandle(`${env.api.taskQueue}-stale-recovery`)
        .describe()
        .catch((err: Error) => err);
      expect(stale).to.be.instanceOf(Error);
      expect((stale as Error).name).to.equal("ScheduleNotFoundError");
    });

    it("purges old finished rows when it runs, and leaves queued rows to their workflows", async () => {
      const config = await env.createConfig({ endpoint: receiver.url, eventTypes: ["ledger.maintenance"] });
      // Stored events (core/stored-events.ts), stored `ageHours` ago.
      const event = (name: string, ageHours: number) =>
        sql(
          `INSERT INTO events (id, type, idempotency_key, body, bytes, created_at)
           VALUES ($1, 'ledger.maintenance', '', '{}', 2, now() - make_interval(hours => $2)) RETURNING id`,
          [`test:${name}:${randomUUID()}`, ageHours],
        ).then((rows) => (rows[0] as { id: string }).id);
      const events = {
        oldOrphan: await event("old-orphan", 24 * 8),
        youngOrphan: await event("young-orphan", 1),
        ofPurgedRow: await event("of-purged-row", 900),
        ofKeptRow: await event("of-kept-row", 900),
        ofWaitingDelivery: await event("of-waiting-delivery", 900),
      };
      const insert = (
        status: string,
        configId: string,
        ageHours: number,
        webhookId = randomUUID(),
        eventId: string | null = null,
      ) =>
        sql(
          `INSERT INTO attempts (id, webhook_id, config_id, config, payload, event_id, status_code, retry_attempt, status, next_retry_after, created_at, updated_at)
           VALUES ($1, $2, $3, '{}', CASE WHEN $6::text IS NULL THEN '{}' END, $6, 500, 0, $4::attempt_status, now() + interval '1 hour', now() - make_interval(hours => $5), now() - make_interval(hours => $5))
           RETURNING id`,
          [randomUUID(), webhookId, configId, status, ageHours, eventId],
        ).then((rows) => (rows[0] as { id: string }).id);
      const oldSuccess = await insert("success", config.id, 800, randomUUID(), events.ofPurgedRow);
      const recentSuccess = await insert("success", config.id, 1, randomUUID(), events.ofKeptRow);
      await sql(
        `INSERT INTO unsent_deliveries (webhook_id, config_id, workflow_id, event_id, reason, accepted_at, next_try_at)
         VALUES ($1, $2, 'test', $3, 'waiting for the rate limit service', now(), now() + interval '1 hour')`,
        [randomUUID(), config.id, events.ofWaitingDelivery],
      );
      const oldFailed = await insert("failed", config.id, 2200);
      const queuedOfDeletedConfig = await insert("to retry", randomUUID(), 1);
      // Send claims: done two days ago, lapsed two days ago, held (still live), done an hour ago.
      const claim = (ageHours: number, expires: string) =>
        sql(
          `INSERT INTO send_claims (webhook_id, retry_attempt, owner, taken_at, expires_at)
           VALUES ($1, 0, 'test', now() - make_interval(hours => $2), ${expires}) RETURNING webhook_id`,
          [randomUUID(), ageHours],
        ).then((rows) => (rows[0] as { webhook_id: string }).webhook_id);
      const claims = {
        oldDone: await claim(48, "'infinity'"),
        oldLapsed: await claim(48, "now() - interval '1 hour'"),
        oldHeld: await claim(48, "now() + interval '1 hour'"),
        recentDone: await claim(1, "'infinity'"),
      };

      // Ordering keys: idle two days (goes), idle an hour (stays), idle two days with a backlog row (stays).
      const orderingKey = (name: string, ageHours: number) =>
        sql(
          `INSERT INTO ordering_keys (config_id, ordering_key, workflow_id, state, updated_at)
           VALUES ($1, $2, $3, 'idle', now() - make_interval(hours => $4))`,
          [config.id, name, `ordered:${config.id}:${name}`, ageHours],
        );
      await orderingKey("old-idle", 48);
      await orderingKey("recent-idle", 1);
      await orderingKey("old-with-backlog", 48);
      const backlogged = randomUUID();
      await sql(
        `INSERT INTO unsent_deliveries (webhook_id, config_id, workflow_id, event_id, reason, accepted_at, next_try_at)
         VALUES ($1, $2, 'test', $3, 'queued', now(), now() + interval '1 hour')`,
        [backlogged, config.id, events.ofWaitingDelivery],
      );
      await sql(
        "INSERT INTO ordered_backlog (sequencer_id, config_id, ordering_key, webhook_id) VALUES ($1, $2, $3, $4)",
        [`ordered:${config.id}:old-with-backlog`, config.id, "old-with-backlog", backlogged],
      );

      // Dead letters: untouched 31 days (goes, pending or replayed), a day (stays).
      const deadLetter = (ageHours: number, status: string) =>
        sql(
          `INSERT INTO dead_letters (id, dedup_key, topic, position, message, kind, reason, delivery_count, status, updated_at)
           VALUES ($1::uuid, $1::text, 'events', 'nats:TEST:1', '\\x7b7d', 'permanent', 'test', 1,
                   $2::dead_letter_status, now() - make_interval(hours => $3))`,
          [randomUUID(), status, ageHours],
        );
      await deadLetter(24 * 31, "pending");
      await deadLetter(24 * 31, "replayed");
      await deadLetter(24, "pending");
      const deadLettersBefore = await sql<{ n: number }>("SELECT count(*)::int AS n FROM dead_letters");

      const handle = env.temporal.schedule.getHandle(retentionId());
      const before = (await handle.describe()).info.recentActions.length;
      await handle.trigger();
      let retention: { success: number; failed: number } | undefined;
      for (let i = 0; i < 100 && !retention; i++) {
        const actions = (await handle.describe()).info.recentActions;
        if (actions.length > before) {
          const started = actions.at(-1)!.action;
          retention = await env.temporal.workflow.getHandle(started.workflow.workflowId).result();
        } else await new Promise((r) => setTimeout(r, 100));
      }
      expect(retention, "the retention schedule did not run").to.exist;
      expect(retention!.success).to.be.at.least(1);
      expect(retention!.failed).to.be.at.least(1);

      const rows = await sql<{ id: string; status: string }>(
        "SELECT id, status::text AS status FROM attempts WHERE id = ANY($1)",
        [[oldSuccess, recentSuccess, oldFailed, queuedOfDeletedConfig]],
      );
      const status = Object.fromEntries(rows.map((r) => [r.id, r.status]));
      expect(status[oldSuccess]).to.equal(undefined);
      expect(status[oldFailed]).to.equal(undefined);
      expect(status[recentSuccess]).to.equal("success");
      expect(status[queuedOfDeletedConfig]).to.equal("to retry");
      const kept = await sql<{ webhook_id: string }>(
        "SELECT webhook_id FROM send_claims WHERE webhook_id = ANY($1)",
        [Object.values(claims)],
      );
      expect(kept.map((r) => r.webhook_id).sort()).to.deep.equal([claims.oldHeld, claims.recentDone].sort());
      // An event stays while a row references it, and a week after it was stored otherwise.
      const storedEvents = await sql<{ id: string }>("SELECT id FROM events WHERE id = ANY($1)", [
        Object.values(events),
      ]);
      expect(storedEvents.map((r) => r.id).sort()).to.deep.equal(
        [events.youngOrphan, events.ofKeptRow, events.ofWaitingDelivery].sort(),
      );
      const keys = await sql<{ ordering_key: string }>(
        "SELECT ordering_key FROM ordering_keys WHERE config_id = $1 ORDER BY ordering_key",
        [config.id],
      );
      expect(keys.map((k) => k.ordering_key)).to.deep.equal(["old-with-backlog", "recent-idle"]);
      // --retention-dead-letter-delay, 720h by default.
      const deadLettersAfter = await sql<{ n: number }>("SELECT count(*)::int AS n FROM dead_letters");
      expect(deadLettersAfter[0]!.n).to.equal(deadLettersBefore[0]!.n - 2);
      expect(
        await sql("SELECT 1 FROM dead_letters WHERE updated_at < now() - interval '30 days'"),
      ).to.have.length(0);
    });
  });
});
