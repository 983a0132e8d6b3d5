// A batch's attempt rows in one statement (attempts-store.ts recordAttempts) on a real
// PostgreSQL: each row reads back as a single delivery's, the events' send claims, waiting
// rows and claimed retries end in the same statement, a retry's rows are written all or
// none, and writing them again changes nothing.

import { randomUUID } from "node:crypto";
import { expect } from "chai";
import { claimForRetry, recordAttempt, recordAttempts } from "../../activities/attempts-store.js";
import { claimBeforeSend } from "../../activities/send-claims.js";
import { recordCollected } from "../../activities/unsent-deliveries.js";
import { type Database, openDatabase } from "../../common/db/database.js";
import { storeEventBody } from "../../core/stored-events.js";
import type { Attempt, Config } from "../../generated/prisma/client.js";
import { createTestDatabase, type TestDatabase } from "../support/postgres.js";

describe("a batch's first attempt rows", function () {
  this.timeout(60_000);
  let testDb: TestDatabase;
  let db: Database;
  let config: Config;
  const eventIds: string[] = [];

  before(async () => {
    testDb = await createTestDatabase();
    db = await openDatabase({ connString: testDb.url, embeddedDataDir: "", autoMigrate: false });
    config = await db.prisma.config.create({
      data: { endpoint: "https://example.test/hook", eventTypes: ["orders.created"], secret: "whsec_x" },
    });
    for (const n of [1, 2, 3, 4])
      eventIds.push((await storeEventBody(db.pool, `{"n":${n}}`, "orders.created", `k${n}`)).id);
  });
  after(async () => {
    await db?.close();
    await testDb?.drop();
  });

  const batchId = randomUUID();
  const shared = () => ({
    config,
    statusCode: 503,
    durationMs: 12,
    retryAttempt: 0,
    status: "to retry" as const,
    nextRetryAfter: new Date(Date.now() + 5_000),
    error: "HTTP 503",
    workflowId: `batch:${config.id}:${batchId}`,
    batchId,
  });
  /** A row without what differs between any two rows (ids, times). */
  const comparable = ({ id, webhookId, eventId, createdAt, updatedAt, ...rest }: Attempt) => rest;

  it("writes each event's row as a single first attempt would, and ends their claims and waiting rows", async () => {
    const events = eventIds.slice(0, 3).map((eventId) => ({ webhookId: randomUUID(), eventId }));
    const now = new Date();
    await recordCollected(
      db.pool,
      events.map((e) => ({
        webhookId: e.webhookId,
        configId: config.id,
        workflowId: `delivery:${e.webhookId}`,
        eventId: e.eventId,
        acceptedAt: now,
        reason: "waiting for its batch",
        nextTryAt: now,
      })),
    );
    // The batch's send claim is its first event's.
    const claim = { webhookId: events[0]!.webhookId, retryAttempt: 0, owner: "sender", leaseMs: 60_000 };
    expect(await claimBeforeSend(db.pool, config.id, claim)).to.deep.include({ claimed: true });

    const common = shared();
    await recordAttempts(db.pool, common, events);
    const single = await recordAttempt(db, { ...common, webhookId: randomUUID(), eventId: eventIds[3]! });
    const rows = await db.prisma.attempt.findMany({
      where: { webhookId: { in: events.map((e) => e.webhookId) } },
    });
    expect(rows.map((r) => [r.webhookId, r.eventId]).sort()).to.deep.equal(
      events.map((e) => [e.webhookId, e.eventId]).sort(),
    );
    for (const row of rows) expect(comparable(row)).to.deep.equal(comparable(single));

    const unsent = await db.pool.query<{ state: string }>(
      "SELECT state::text FROM unsent_deliveries WHERE webhook_id = ANY($1::uuid[])",
      [events.map((e) => e.webhookId)],
    );
    expect(unsent.rows.map((r) => r.state)).to.deep.equal(["sent", "sent", "sent"]);
    // A re-run of the send finds the claim's attempt written.
    expect(await claimBeforeSend(db.pool, config.id, { ...claim, owner: "another sender" })).to.deep.include({
      attemptWritten: true,
      claimed: false,
    });
  });

  it("keeps the rows when the same first attempts are written again", async () => {
    const events = eventIds.slice(0, 2).map((eventId) => ({ webhookId: randomUUID(), eventId }));
    await recordAttempts(db.pool, shared(), events);
    const where = { webhookId: { in: events.map((e) => e.webhookId) } };
    const first = await db.prisma.attempt.findMany({ where, orderBy: { webhookId: "asc" } });
    await recordAttempts(db.pool, { ...shared(), statusCode: 200, status: "success", error: null }, events);
    expect(await db.prisma.attempt.findMany({ where, orderBy: { webhookId: "asc" } })).to.deep.equal(first);
  });

  it("writes a retry's rows all or none, moving each event's claimed row and ending its claim", async () => {
    const events = eventIds.slice(0, 3).map((eventId) => ({ webhookId: randomUUID(), eventId }));
    await recordAttempts(db.pool, shared(), events);
    for (const e of events) expect(await claimForRetry(db.prisma, e.webhookId, 1)).to.not.equal(undefined);
    const retry = { ...shared(), retryAttempt: 1, statusCode: 200, status: "success" as const, error: null };
    // One event names an event that is not stored: the statement fails, and no event of
    // the batch has its retry written (one transaction per event wrote the others).
    const broken = [...events.slice(0, 2), { webhookId: events[2]!.webhookId, eventId: randomUUID() }];
    let refused: unknown;
    await recordAttempts(db.pool, retry, broken).catch((err: unknown) => {
      refused = err;
    });
    expect(String(refused)).to.match(/foreign key/);
    const where = { webhookId: { in: events.map((e) => e.webhookId) } };
    const before = await db.prisma.attempt.findMany({ where });
    expect(before.map((r) => [r.retryAttempt, r.status])).to.deep.equal(events.map(() => [0, "retrying"]));

    const claims = events.map((e) => ({
      webhookId: e.webhookId,
      retryAttempt: 1,
      owner: "s",
      leaseMs: 60_000,
    }));
    for (const c of claims) await claimBeforeSend(db.pool, config.id, c);
    const written = await recordAttempts(db.pool, retry, events);
    expect(written).to.have.length(3);
    const rows = await db.prisma.attempt.findMany({
      where,
      orderBy: [{ webhookId: "asc" }, { retryAttempt: "asc" }],
    });
    // Each event: its first row ended with the retry's outcome, its retry row the newest.
    expect(rows.map((r) => [r.retryAttempt, r.status])).to.deep.equal(
      events.flatMap(() => [
        [0, "success"],
        [1, "success"],
      ]),
    );
    for (const c of claims)
      expect(await claimBeforeSend(db.pool, config.id, { ...c, owner: "late" })).to.deep.include({
        attemptWritten: true,
        claimed: false,
      });
  });
});
