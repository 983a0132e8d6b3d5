import { randomUUID } from "node:crypto";
import type { ServerResponse } from "node:http";
import { MockActivityEnvironment } from "@temporalio/testing";
import { DefaultLogger } from "@temporalio/worker";
import { expect } from "chai";
import { sendBatch } from "../../activities/batch-send.js";
import type { BatchSendInput } from "../../activities/batch-types.js";
import type { SendDeps } from "../../activities/delivery-deps.js";
import type { DeliveryPolicy, SendAttemptInput } from "../../activities/delivery-types.js";
import { BrokerConnections } from "../../activities/destinations/connections.js";
import { OAuthTokens } from "../../activities/oauth-tokens.js";
import { sendAttemptOnce } from "../../activities/send-attempt.js";
import { CLAIM_LEASE_MS } from "../../activities/send-claims.js";
import { type Database, openDatabase } from "../../common/db/database.js";
import { createLogger } from "../../common/logger.js";
import { ConfigSecrets } from "../../core/config-secrets.js";
import { EgressPolicy } from "../../core/egress-policy.js";
import { storeEventBody } from "../../core/stored-events.js";
import { createTestDatabase, type TestDatabase } from "../support/postgres.js";
import { Receiver } from "../support/receiver.js";

/**
 * The one send path (activities/send-pipeline.ts) as a delivery and as a batch take it, run
 * as Temporal activities (the testing library's activity environment) against a real
 * PostgreSQL and a real HTTP receiver: whichever the kind, a POST held open past the send
 * claim's lease keeps its claim (renewed), so a second execution of the same attempt
 * started meanwhile backs off instead of POSTing again, and then returns the first one's
 * outcome.
 */
describe("one send path for deliveries and batches", function () {
  this.timeout(180_000);
  let testDb: TestDatabase;
  let db: Database;
  let receiver: Receiver;
  let configId: string;
  let deps: SendDeps;
  const held: ServerResponse[] = [];
  const policy: DeliveryPolicy = {
    minBackoffMs: 1000,
    maxBackoffMs: 60_000,
    abortAfterMs: 3_600_000,
    maxAttempts: 5,
  };

  before(async () => {
    receiver = await new Receiver().start();
    // Every POST is held until the test answers it.
    receiver.respond = (_req, res) => void held.push(res);
    testDb = await createTestDatabase();
    db = await openDatabase({ connString: testDb.url, embeddedDataDir: "", autoMigrate: false });
    const egress = new EgressPolicy({ denyPrivate: false, allow: [], deny: [] });
    deps = {
      prisma: db.prisma,
      pool: db.pool,
      logger: createLogger("send-pipeline-test", "warn"),
      sendTimeoutMs: 120_000,
      signatureHeaders: "svc",
      egress,
      secrets: new ConfigSecrets(null),
      oauthTokens: new OAuthTokens(egress),
      brokers: new BrokerConnections(egress, createLogger("send-pipeline-test", "warn")),
    };
    configId = (
      await db.prisma.config.create({
        data: {
          endpoint: receiver.url,
          eventTypes: ["orders.created"],
          secret: Buffer.alloc(24, 3).toString("base64"),
        },
      })
    ).id;
  });
  after(async () => {
    for (const res of held) if (!res.headersSent) res.writeHead(200).end();
    await receiver?.stop();
    await db?.close();
    await testDb?.drop();
  });

  const storedEvent = async (n: number) => {
    const body = `{"n":${n}}`;
    const { id } = await storeEventBody(db.pool, body, "orders.created", `key-${randomUUID()}`);
    return { id, bytes: body.length };
  };

  /** An execution of a send activity: its own run and attempt, as Temporal would start it. */
  const execution = (activityAttempt: number) =>
    new MockActivityEnvironment(
      {
        activityId: "send",
        attempt: activityAttempt,
        workflowExecution: { workflowId: `delivery:${randomUUID()}`, runId: randomUUID() },
      },
      // The backed-off execution's failure is expected: not logged as a warning.
      { logger: new DefaultLogger("ERROR") },
    );

  const kinds = [
    {
      kind: "a delivery",
      async start(): Promise<(attempt: number) => Promise<unknown>> {
        const eventRef = await storedEvent(1);
        const input: SendAttemptInput = {
          webhookId: randomUUID(),
          configId,
          eventRef,
          policy,
          sendTaskQueue: "sends",
          retryAttempt: 0,
        };
        return (attempt) => execution(attempt).run(() => sendAttemptOnce(deps, input));
      },
    },
    {
      kind: "a batch",
      async start(): Promise<(attempt: number) => Promise<unknown>> {
        const members = [];
        for (const n of [1, 2, 3])
          members.push({
            webhookId: randomUUID(),
            eventRef: await storedEvent(n),
            acceptedAt: new Date().toISOString(),
          });
        const input: BatchSendInput = { batchId: randomUUID(), configId, members, policy, retryAttempt: 0 };
        return (attempt) => execution(attempt).run(() => sendBatch(deps, input));
      },
    },
  ];

  for (const { kind, start } of kinds)
    it(`keeps ${kind}'s claim past its lease while its POST is out, and a second execution finds it`, async () => {
      const posts = receiver.requests.length;
      const send = await start();
      const first = send(1);
      while (receiver.requests.length === posts) await new Promise((r) => setTimeout(r, 100));
      // Past the lease: an unrenewed claim would have lapsed by now.
      await new Promise((r) => setTimeout(r, CLAIM_LEASE_MS + 3000));
      let backedOff: unknown;
      await send(2).catch((err: unknown) => {
        backedOff = err;
      });
      expect(receiver.requests.length - posts, "the second execution POSTed the same attempt").to.equal(1);
      expect(String(backedOff)).to.match(/being sent by another execution/);
      held.at(-1)!.writeHead(200).end("ok");
      const outcome = await first;
      // The second execution's retry returns the first one's outcome without a POST.
      expect(await send(3)).to.deep.equal(outcome);
      expect(receiver.requests.length - posts).to.equal(1);
      expect(JSON.stringify(outcome)).to.match(/success/);
    });
});
