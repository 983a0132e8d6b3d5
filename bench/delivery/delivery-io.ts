import { randomUUID } from "node:crypto";
import { recordAttempt } from "../../activities/attempts-store.js";
import { sendWebhook } from "../../activities/http-send.js";
import { activeSecrets } from "../../activities/secrets.js";
import { CLAIM_LEASE_MS, claimBeforeSend } from "../../activities/send-claims.js";
import { openDatabase } from "../../common/db/database.js";
import { findActiveConfigs } from "../../core/config-rows.js";
import { subscriptionsMatching } from "../../core/event-types.js";
import { readStoredEvent, storeEventBody } from "../../core/stored-events.js";
import type { Config } from "../../generated/prisma/client.js";
import { createTestDatabase } from "../../test/support/postgres.js";
import { Receiver, signedWith } from "../../test/support/receiver.js";

// The database and HTTP work a delivery cannot skip, with the product's own functions:
// the consumer's query for an event's configs and its store of the event, the send's read
// of its config (with its attempt row and send claim) and of the stored event, the signed POST to a receiver that verifies every signature, and
// the attempt row's INSERT. io-floor.js runs it without Temporal; temporal-floor.js runs
// it inside the floor's workflows, to show what it leaves of the floor.

const SECRET = Buffer.alloc(24, 9).toString("base64");

/** The event type the bench config subscribes to. */
export const IO_EVENT_TYPE = "bench.ok";

export interface DeliveryIo {
  /** Requests the receiver got whose signature did not verify. */
  readonly badSignatures: () => number;
  readonly received: () => number;
  /** The consumer's query: the active configs subscribed to `eventType`. */
  matchConfigs(eventType: string): Promise<Config[]>;
  /**
   * A first send: read the config, POST, write the row. A local send (a local activity)
   * also looks for its attempt row in that read, as the product's does.
   */
  send(configId: string, body: string, idempotencyKey: string, local: boolean): Promise<number>;
  close(): Promise<void>;
}

/** A fresh database with one config whose endpoint is a verifying receiver in this process. */
export async function openDeliveryIo(): Promise<DeliveryIo> {
  let badSignatures = 0;
  const receiver = await new Receiver().start();
  receiver.respond = (req, res) => {
    if (!signedWith(SECRET, req)) badSignatures++;
    res.writeHead(200).end();
  };
  const testDb = await createTestDatabase();
  const db = await openDatabase({ connString: testDb.url, embeddedDataDir: "", autoMigrate: false });
  const { rows } = await db.pool.query<{ id: string }>(
    "INSERT INTO configs (id, endpoint, event_types, secret) VALUES ($1, $2, $3, $4) RETURNING id",
    [randomUUID(), receiver.url, [IO_EVENT_TYPE], SECRET],
  );
  if (!rows[0]) throw new Error("no config row");
  return {
    badSignatures: () => badSignatures,
    received: () => receiver.requests.length,
    matchConfigs: (eventType) => findActiveConfigs(db.pool, subscriptionsMatching(eventType)),
    async send(configId, body, idempotencyKey, local) {
      const webhookId = randomUUID();
      // The consumer stores the event once; the send reads back what it signs.
      const { id: eventId } = await storeEventBody(db.pool, body, IO_EVENT_TYPE, idempotencyKey);
      // A delivery's send takes its claim in the statement that reads its config.
      const { config } = await claimBeforeSend(db.pool, configId, {
        webhookId,
        retryAttempt: 0,
        owner: `bench/${local ? "local" : "queue"}/${webhookId}`,
        leaseMs: CLAIM_LEASE_MS,
      });
      if (!config) throw new Error(`config ${configId} is gone`);
      const event = await readStoredEvent(db.pool, eventId);
      if (!event) throw new Error(`event ${eventId} is gone`);
      const result = await sendWebhook({
        endpoint: config.endpoint,
        webhookId,
        body: event.body,
        secrets: activeSecrets(config, new Date()),
        idempotencyKey,
        test: false,
      });
      await recordAttempt(db, {
        webhookId,
        config,
        eventId,
        statusCode: result.statusCode,
        durationMs: result.durationMs,
        retryAttempt: 0,
        status: result.statusCode === 200 ? "success" : "failed",
        nextRetryAfter: null,
        error: null,
      });
      return result.statusCode;
    },
    async close() {
      await db.close();
      await testDb.drop();
      await receiver.stop();
    },
  };
}
