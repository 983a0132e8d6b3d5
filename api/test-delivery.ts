import { randomUUID } from "node:crypto";
import { exchangeOf } from "../activities/attempt-exchange.js";
import { recordAttempt } from "../activities/attempts-store.js";
import { classify } from "../activities/delivery-policy.js";
import { activeSecrets } from "../activities/secrets.js";
import {
  type DestinationClients,
  type OpenedCredentials,
  sendToDestination,
} from "../activities/send-destination.js";
import type { Database } from "../common/db/database.js";
import type { SignatureHeaderStyle } from "../core/options.js";
import { storeEvent } from "../core/stored-events.js";
import type { Config } from "../generated/prisma/client.js";
import type { AttemptWithEvent } from "./serialize.js";
import { DEFAULT_TEST_EVENT, type TestEventOf } from "./test-event.js";

/**
 * POST /configs/{id}/test: one signed test event (`webhooks.test`, or a catalog type's example) through
 * the same send code as real deliveries, to the config's destination (`svc-webhook-test: true`, the signing headers named as the config's
 * deliveries name them), recorded as a single attempt (success or failed, never retried).
 */
export async function sendTestDelivery(
  db: Pick<Database, "prisma" | "pool">,
  config: Config,
  timeoutMs: number,
  clients: DestinationClients,
  credentials: OpenedCredentials,
  /** The config's names of the signing headers, else the deployment's (activities/signature-headers.ts). */
  signatureHeaders: SignatureHeaderStyle,
  sent: TestEventOf = DEFAULT_TEST_EVENT,
): Promise<AttemptWithEvent> {
  const webhookId = randomUUID();
  const event = {
    idempotency_key: `test-${webhookId}`,
    date: new Date().toISOString(),
    app: sent.app,
    version: "v1",
    type: sent.type,
    payload: sent.payload,
  };
  const body = JSON.stringify(event);
  // Stored like every event sent, so its row references it as theirs do.
  const { ref } = await storeEvent(db.pool, event);
  const result = await sendToDestination(clients, config, credentials, {
    webhookId,
    body,
    secrets: activeSecrets(config, new Date()),
    idempotencyKey: event.idempotency_key,
    test: true,
    signatureHeaders,
    timeoutMs,
    eventBodies: [body],
  });
  const row = await recordAttempt(db, {
    webhookId,
    config,
    eventId: ref.id,
    statusCode: result.statusCode,
    ...(result.permanent ? {} : { durationMs: result.durationMs }),
    retryAttempt: 0,
    status: classify(result.statusCode) === "success" ? "success" : "failed",
    nextRetryAfter: null,
    error: result.error ?? null,
    exchange: exchangeOf(result),
  });
  return { ...row, event: { body } };
}
