import { randomUUID } from "node:crypto";
import { expect } from "chai";
import { DeliveryEnv } from "../support/delivery-env.js";
import { eventually, sql } from "../support/poison.js";
import { Receiver } from "../support/receiver.js";

interface Summary {
  webhookID: string;
  status: string;
  eventType?: string;
  attemptCount: number;
  lastStatusCode?: number;
  lastAttemptAt?: string;
  acceptedAt?: string;
  nextRetryAfter?: string;
  reason?: string;
}

/**
 * GET /configs/{id}/deliveries on the real stack (PostgreSQL, NATS JetStream, the Temporal
 * dev server): one item per delivery, newest first, filters, keyset pages, bad query values.
 * Most deliveries are rows written straight into the tables, at fixed times, so that the
 * expected order is exact; one is a real delivery of a published event.
 */
describe("deliveries list of a config (GET /configs/{id}/deliveries)", function () {
  this.timeout(120_000);
  const env = new DeliveryEnv();
  const receiver = new Receiver();
  let configId: string;
  let otherConfig: string;
  /** webhook id by name, for the fixture deliveries. */
  const w: Record<string, string> = {};

  const list = async (query = "", id = configId) => {
    const r = await env.api.call("GET", `/configs/${id}/deliveries${query}`);
    expect(r.status, r.text).to.equal(200);
    return r.body.cursor as { data: Summary[]; hasMore: boolean; next?: string; pageSize: number };
  };
  const names = (items: Summary[]) =>
    items.map((d) => Object.keys(w).find((k) => w[k] === d.webhookID) ?? d.webhookID);

  /** One stored event of `type`, as the service stores it (id is the body's hash in the real thing). */
  const storedEvent = async (type: string) => {
    const id = `test:${randomUUID()}`;
    const body = JSON.stringify({ type: type.toUpperCase(), payload: {} });
    await sql(
      env.api,
      "INSERT INTO events (id, type, idempotency_key, body, bytes) VALUES ($1, $2, '', $3, $4)",
      [id, type, body, Buffer.byteLength(body)],
    );
    return id;
  };
  /** Attempt rows of one delivery, minute offsets from a fixed base; the last row is its state. */
  const delivery = async (
    name: string,
    type: string,
    rows: [minute: number, status: string, code: number][],
    config = configId,
  ) => {
    w[name] = randomUUID();
    const event = await storedEvent(type);
    for (const [i, [minute, status, code]] of rows.entries()) {
      await sql(
        env.api,
        `INSERT INTO attempts (id, webhook_id, config_id, config, event_id, status_code, retry_attempt, status,
                               next_retry_after, error, created_at, updated_at)
         VALUES ($1, $2, $3, '{}', $4, $5, $6, $7::attempt_status,
                 CASE WHEN $7 = 'to retry' THEN timestamptz '2026-01-01T01:00:00Z' END,
                 CASE WHEN $7 = 'failed' THEN 'gave up after 3 attempts' END,
                 timestamptz '2026-01-01T00:00:00Z' + make_interval(mins => $8),
                 timestamptz '2026-01-01T00:00:00Z' + make_interval(mins => $8))`,
        [randomUUID(), w[name], config, event, code, i, status, minute],
      );
    }
  };
  const unsent = async (name: string, type: string, minute: number, state: "waiting" | "closed") => {
    w[name] = randomUUID();
    await sql(
      env.api,
      `INSERT INTO unsent_deliveries (webhook_id, config_id, workflow_id, event_id, state, reason, accepted_at, next_try_at)
       VALUES ($1::uuid, $2, 'wf-' || $1::text, $3, $4::unsent_state, $5,
               timestamptz '2026-01-01T00:00:00Z' + make_interval(mins => $6),
               timestamptz '2026-01-01T02:00:00Z')`,
      [
        w[name],
        configId,
        await storedEvent(type),
        state,
        state === "waiting" ? "waiting for the rate limit service" : "closed before any send",
        minute,
      ],
    );
  };

  before(async () => {
    await env.start();
    await receiver.start();
    configId = (await env.createConfig({ endpoint: receiver.url, eventTypes: ["fixture.*"] })).id;
    otherConfig = (await env.createConfig({ endpoint: receiver.url, eventTypes: ["fixture.*"] })).id;
    // Newest first by last attempt (or acceptance): retried(50) waiting(40) failed(30) ok2(20) closed(15) ok1(10).
    await delivery("ok1", "fixture.paid", [[10, "success", 200]]);
    await delivery("retried", "fixture.paid", [
      [5, "to retry", 500],
      [45, "to retry", 503],
      [50, "success", 200],
    ]);
    await delivery("failed", "fixture.refunded", [
      [25, "to retry", 0],
      [30, "failed", 500],
    ]);
    await delivery("ok2", "fixture.refunded", [[20, "success", 204]]);
    await unsent("waiting", "fixture.paid", 40, "waiting");
    await unsent("closed", "fixture.refunded", 15, "closed");
    // A waiting row whose first attempt has been written since is listed once, from its attempts.
    await sql(
      env.api,
      `INSERT INTO unsent_deliveries (webhook_id, config_id, workflow_id, event_id, state, reason, accepted_at, next_try_at)
       VALUES ($1, $2, 'wf', $3, 'sent', 'was waiting', timestamptz '2026-01-01T00:04:00Z', now())`,
      [w.retried, configId, await storedEvent("fixture.paid")],
    );
    await delivery("elsewhere", "fixture.paid", [[60, "success", 200]], otherConfig);
  });

  after(async () => {
    await receiver.stop();
    await env.stop();
  });

  it("lists one item per delivery, newest first by last attempt or acceptance, with its summary", async () => {
    const page = await list();
    expect(names(page.data)).to.deep.equal(["retried", "waiting", "failed", "ok2", "closed", "ok1"]);
    expect(page.hasMore).to.equal(false);
    const [retried, waiting, failed, , closed] = page.data;
    expect(retried).to.include({
      status: "success",
      eventType: "fixture.paid",
      attemptCount: 3,
      lastStatusCode: 200,
      lastAttemptAt: "2026-01-01T00:50:00.000Z",
    });
    expect(waiting).to.include({
      status: "waiting",
      attemptCount: 0,
      acceptedAt: "2026-01-01T00:40:00.000Z",
      nextRetryAfter: "2026-01-01T02:00:00.000Z",
      reason: "waiting for the rate limit service",
    });
    expect(waiting).to.not.have.property("lastStatusCode");
    expect(failed).to.include({ status: "failed", attemptCount: 2, reason: "gave up after 3 attempts" });
    expect(closed).to.include({ status: "failed", attemptCount: 0, reason: "closed before any send" });
    expect(closed).to.not.have.property("nextRetryAfter");
    // The same status, count and times as the one-delivery answer.
    const one = (await env.api.call("GET", `/webhooks/${w.retried}`)).body.data;
    for (const key of ["status", "attemptCount", "lastStatusCode", "lastAttemptAt", "firstAttemptAt"]) {
      expect(retried, key).to.have.property(key, one[key]);
    }
  });

  it("filters by status and by event type, together too", async () => {
    expect(names((await list("?status=success")).data)).to.deep.equal(["retried", "ok2", "ok1"]);
    expect(names((await list("?status=failed")).data)).to.deep.equal(["failed", "closed"]);
    expect(names((await list("?status=waiting")).data)).to.deep.equal(["waiting"]);
    expect(names((await list("?status=to%20retry")).data)).to.deep.equal([]);
    expect(names((await list("?eventType=fixture.refunded")).data)).to.deep.equal([
      "failed",
      "ok2",
      "closed",
    ]);
    // Compared as stored: normalised to lower case.
    expect(names((await list("?eventType=FIXTURE.PAID&status=success")).data)).to.deep.equal([
      "retried",
      "ok1",
    ]);
    expect(names((await list("?eventType=fixture.none")).data)).to.deep.equal([]);
  });

  it("pages with a cursor: every delivery once, in order, filters kept", async () => {
    const seen: string[] = [];
    let query = "?pageSize=2";
    for (;;) {
      const page = await list(query);
      expect(page.pageSize).to.equal(2);
      expect(page.data.length).to.be.at.most(2);
      seen.push(...names(page.data));
      if (!page.hasMore) break;
      query = `?pageSize=2&cursor=${page.next}`;
    }
    expect(seen).to.deep.equal(["retried", "waiting", "failed", "ok2", "closed", "ok1"]);

    const first = await list("?status=success&pageSize=1");
    expect(names(first.data)).to.deep.equal(["retried"]);
    const second = await list(`?status=success&pageSize=1&cursor=${first.next}`);
    expect(names(second.data)).to.deep.equal(["ok2"]);
    const third = await list(`?status=success&pageSize=1&cursor=${second.next}`);
    expect(names(third.data)).to.deep.equal(["ok1"]);
    expect(third.hasMore).to.equal(false);
  });

  it("lists a real delivery of a published event", async () => {
    const live = (await env.createConfig({ endpoint: receiver.url, eventTypes: ["shop.order_paid"] })).id;
    await env.publish(env.event({ app: "shop", type: "ORDER_PAID" }));
    let items: Summary[] = [];
    await eventually(
      "the delivery listed as a success",
      async () => {
        items = (await list("", live)).data;
        return items[0]?.status === "success";
      },
      30_000,
    );
    expect(items).to.have.length(1);
    expect(items[0]).to.include({ eventType: "shop.order_paid", attemptCount: 1, lastStatusCode: 200 });
    expect(names((await list("?eventType=shop.order_paid", live)).data)).to.have.length(1);
  });

  it("answers 400 naming the parameter for bad query values, 404 for an unknown config", async () => {
    const bad: [string, string][] = [
      ["?status=pending", "status"],
      ["?status=", "status"],
      ["?eventType=", "eventType"],
      [`?eventType=${"x".repeat(256)}`, "eventType"],
      ["?pageSize=0", "pageSize"],
      ["?pageSize=abc", "pageSize"],
      ["?pageSize=1001", "pageSize"],
      ["?cursor=nonsense", "cursor"],
      [
        `?cursor=${Buffer.from(JSON.stringify({ t: "2026-01-01T00:00:00Z", id: "x" })).toString("base64url")}`,
        "cursor",
      ],
      ["?status=success&status=failed", "status"],
      ["?order=asc", "order"],
    ];
    for (const [query, word] of bad) {
      const r = await env.api.call("GET", `/configs/${configId}/deliveries${query}`);
      expect(r.status, `${query}: ${r.text}`).to.equal(400);
      expect(r.body.errorCode).to.equal("VALIDATION");
      expect(r.body.errorMessage, query).to.contain(word);
    }
    for (const id of [randomUUID(), "not-a-uuid"]) {
      const r = await env.api.call("GET", `/configs/${id}/deliveries`);
      expect(r.status, r.text).to.equal(404);
      expect(r.body.errorCode).to.equal("NOT_FOUND");
    }
  });
});
