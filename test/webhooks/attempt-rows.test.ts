// The delivery's hot queries in plain SQL (core/config-rows.ts, attempts-store.ts's first
// attempt) on a real PostgreSQL: they give back exactly what Prisma gives for the same rows,
// and a first attempt written twice (a retried or re-run send) keeps the first row.

import { randomUUID } from "node:crypto";
import { expect } from "chai";
import { recordAttempt } from "../../activities/attempts-store.js";
import { claimBeforeSend, releaseClaim, renewClaim } from "../../activities/send-claims.js";
import { type Database, openDatabase } from "../../common/db/database.js";
import { findActiveConfigs, findConfig } from "../../core/config-rows.js";
import { storeEventBody } from "../../core/stored-events.js";
import type { Config } from "../../generated/prisma/client.js";
import { createTestDatabase, type TestDatabase } from "../support/postgres.js";

describe("delivery rows in plain SQL", function () {
  this.timeout(60_000);
  let testDb: TestDatabase;
  let db: Database;
  let config: Config;
  /** The stored event every row here references. */
  let eventId: string;

  before(async () => {
    testDb = await createTestDatabase();
    db = await openDatabase({ connString: testDb.url, embeddedDataDir: "", autoMigrate: false });
    config = await db.prisma.config.create({
      data: {
        name: "orders",
        endpoint: "https://example.test/hook",
        eventTypes: ["orders.created", "orders.*"],
        secret: "whsec_current",
        previousSecret: "whsec_old",
        previousSecretExpiresAt: new Date(Date.now() + 60_000),
      },
    });
    eventId = (await storeEventBody(db.pool, '{"a":1}', "orders.created", "")).id;
  });
  after(async () => {
    await db?.close();
    await testDb?.drop();
  });

  it("reads a config as Prisma does, and null for an unknown id", async () => {
    expect(await findConfig(db.pool, config.id)).to.deep.equal(
      await db.prisma.config.findUnique({ where: { id: config.id } }),
    );
    expect(await findConfig(db.pool, randomUUID())).to.equal(null);
  });

  it("finds the active configs subscribed to an event as Prisma's hasSome does", async () => {
    const make = (eventTypes: string[], active = true) =>
      db.prisma.config.create({
        data: { endpoint: "https://example.test/x", eventTypes, secret: "s", active },
      });
    await make(["ledger.posted"]);
    await make(["ledger.*"]);
    await make(["ledger.posted"], false);
    await make(["payments.created"]);
    const byId = (cs: Config[]) => [...cs].sort((a, b) => a.id.localeCompare(b.id));
    for (const subscriptions of [["ledger.posted", "ledger.*", "*"], ["payments.created"], ["none.such"]]) {
      const prismas = await db.prisma.config.findMany({
        where: { active: true, eventTypes: { hasSome: subscriptions } },
      });
      expect(byId(await findActiveConfigs(db.pool, subscriptions))).to.deep.equal(byId(prismas));
    }
    expect(await findActiveConfigs(db.pool, ["ledger.posted", "ledger.*"])).to.have.length(2);
  });

  it("reads a send's config and whether its attempt row is written, and takes its claim, in one statement", async () => {
    const prismas = await db.prisma.config.findUnique({ where: { id: config.id } });
    const webhookId = randomUUID();
    const claim = (owner: string, retryAttempt = 0, leaseMs = 60_000) =>
      claimBeforeSend(db.pool, config.id, { webhookId, retryAttempt, owner, leaseMs });
    expect(await claim("first")).to.deep.equal({
      config: prismas,
      // The config's endpoint auth row, read in the same statement: it has none.
      auth: null,
      attemptWritten: false,
      claimed: true,
      heldUntil: null,
    });
    // A second execution while the first holds the claim: not claimed, nothing written yet,
    // and it learns until when the first's claim holds.
    const second = await claim("second");
    expect(second).to.deep.include({ config: prismas, attemptWritten: false, claimed: false });
    expect(second.heldUntil!.getTime()).to.be.within(Date.now() + 50_000, Date.now() + 61_000);
    await recordAttempt(db, {
      webhookId,
      config,
      eventId,
      statusCode: 200,
      retryAttempt: 0,
      status: "success",
      nextRetryAfter: null,
      error: null,
    });
    // The row written marks the claim done: a later execution finds the row, never the claim.
    expect(await claim("third")).to.deep.include({ config: prismas, attemptWritten: true, claimed: false });
    const { rows } = await db.pool.query(
      "SELECT owner, expires_at = 'infinity' AS done FROM send_claims WHERE webhook_id = $1",
      [webhookId],
    );
    expect(rows).to.deep.equal([{ owner: "first", done: true }]);
    // Another attempt of the same delivery: its own claim.
    expect((await claim("fourth", 1)).claimed).to.equal(true);
    // A config deleted since: no config, and the written row is still found.
    expect(
      await claimBeforeSend(db.pool, randomUUID(), { webhookId, retryAttempt: 0, owner: "x", leaseMs: 1000 }),
    ).to.deep.include({ config: null, attemptWritten: true, claimed: false });
  });

  it("takes over a claim whose lease ran out (its sender died), and gives a released one to the next", async () => {
    const webhookId = randomUUID();
    const key = { webhookId, retryAttempt: 0 };
    expect(
      (await claimBeforeSend(db.pool, config.id, { ...key, owner: "dead", leaseMs: 1 })).claimed,
    ).to.equal(true);
    await new Promise((r) => setTimeout(r, 20));
    expect(
      (await claimBeforeSend(db.pool, config.id, { ...key, owner: "alive", leaseMs: 60_000 })).claimed,
    ).to.equal(true);
    // A renewal extends the claim of its owner only.
    const { rows: before } = await db.pool.query("SELECT expires_at FROM send_claims WHERE webhook_id = $1", [
      webhookId,
    ]);
    await renewClaim(db.pool, { ...key, owner: "someone else", leaseMs: 120_000 });
    await renewClaim(db.pool, { ...key, owner: "alive", leaseMs: 90_000 });
    const { rows: after } = await db.pool.query("SELECT expires_at FROM send_claims WHERE webhook_id = $1", [
      webhookId,
    ]);
    expect(after[0].expires_at.getTime() - before[0].expires_at.getTime()).to.be.within(29_000, 31_000);
    await releaseClaim(db.pool, { ...key, owner: "alive", leaseMs: 60_000 });
    expect(
      (await claimBeforeSend(db.pool, config.id, { ...key, owner: "next", leaseMs: 60_000 })).claimed,
    ).to.equal(true);
  });

  for (const status of ["success", "to retry", "failed"] as const) {
    it(`writes a first attempt (${status}) that reads back as Prisma's row`, async () => {
      const webhookId = randomUUID();
      const row = await recordAttempt(db, {
        webhookId,
        config,
        eventId,
        statusCode: status === "success" ? 204 : 503,
        durationMs: 12,
        retryAttempt: 0,
        status,
        nextRetryAfter: status === "to retry" ? new Date(Date.now() + 5_000) : null,
        error: status === "success" ? null : "HTTP 503",
        replayOf: status === "failed" ? randomUUID() : undefined,
        workflowId: `delivery-${webhookId}`,
      });
      const stored = await db.prisma.attempt.findUnique({
        where: { webhookId_retryAttempt: { webhookId, retryAttempt: 0 } },
      });
      expect(row).to.deep.equal(stored);
      // The snapshot leaves the secrets out.
      expect(stored!.config).to.deep.include({ id: config.id, endpoint: config.endpoint, name: "orders" });
      expect(JSON.stringify(stored!.config)).not.to.include("whsec_");
    });
  }

  it("keeps the first row when the same first attempt is written again", async () => {
    const webhookId = randomUUID();
    const attempt = (statusCode: number) =>
      recordAttempt(db, {
        webhookId,
        config,
        eventId,
        statusCode,
        retryAttempt: 0,
        status: "success",
        nextRetryAfter: null,
        error: null,
      });
    const first = await attempt(200);
    const again = await Promise.all([attempt(201), attempt(202)]);
    for (const row of again) expect(row).to.deep.equal(first);
    expect(await db.prisma.attempt.count({ where: { webhookId } })).to.equal(1);
  });
});
